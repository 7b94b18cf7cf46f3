// Single-copy collectives over registered buffers (loomCommRegister). When
// every rank's send and receive buffers lie in registered windows, each is
// mapped in every rank's process (transport/shm/peer_windows.h), and a rank
// does its share with plain loads and stores between ranks' buffers:
//
//   ReduceScatter: rank r reads block r of every input, writes its output.
//   AllGather:     rank r writes its input into block r of every output.
//   AllReduce:     rank r reduces block r of every input and writes the
//                  result into block r of every output.
//
// Memory then sees each input byte read once and each output byte written
// once: exactly the traffic docs/PERF.md's bounds count, where the FIFOs add
// a write and a read of a staging slot per byte and cross-memory attach
// (direct.h) pays the kernel's page-by-page copy.
//
// No rank touches another's block, so in-place calls are safe without a
// barrier between reading and writing; one barrier at the end keeps every
// rank from returning (and reusing its buffers) while a peer still works on
// them.
//
// A kind that reaches peers' registered memory only through posted
// transfers (an RDMA NIC; transport/regions.h) runs the same shares by
// transfers: a rank reads its block of every input into scratch, reduces
// there, and writes the result into every output.
#pragma once

#include <vector>

#include "collectives/address_swap.h"
#include "collectives/collectives.h"

namespace loom {

// Given the swapped addresses, runs the call single-copy and returns true if
// every rank's buffers are registered; else returns false having done
// nothing (every rank sees the same addresses and windows, so all return
// alike and fall back together).
Task<bool> registeredAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                               const std::vector<PeerBuffers>& peers);
Task<bool> registeredAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                               const std::vector<PeerBuffers>& peers);
Task<bool> registeredReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                                   const std::vector<PeerBuffers>& peers);

}  // namespace loom

// Single-copy algorithms (LOOM_CMA=1), where the transport can read
// peers' buffers (transport/peer_memory.h). Ranks swap buffer addresses
// through the FIFOs, then each rank reads what it needs from its peers'
// buffers straight into its own: no byte is staged in a FIFO slot.
//
// Why: through FIFOs a block is copied into a slot and out again, so memory
// sees at least twice the traffic the collective needs, and on one host
// memory bandwidth is the limit (docs/PERF.md derives the ceilings). Reading
// peers directly, ReduceScatter moves what its bound counts and AllReduce
// about 1.5x that, against 2.5-3x through the FIFOs.
#pragma once

#include <vector>

#include "collectives/address_swap.h"
#include "collectives/collectives.h"

namespace loom {

// Once the ranks swapped their buffers' addresses (select.cc swaps them; a
// registered call whose buffers are not all registered may fall back to
// these with the same addresses).
Task<> directAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                       const std::vector<PeerBuffers>& peers);
Task<> directAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                       const std::vector<PeerBuffers>& peers);
Task<> directReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                           const std::vector<PeerBuffers>& peers);

}  // namespace loom

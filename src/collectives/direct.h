// Single-copy algorithms for large messages, where the transport can read
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

// Whether the large-message path is open to this team: more than one rank
// and peers' memory readable by all.
bool directAvailable(const Team& team);

Task<> directAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> directAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> directReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait);

// The same, once the addresses are swapped (registered.h swaps them first to
// see whether the buffers are registered, and falls back to these).
Task<> directAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                       const std::vector<PeerBuffers>& peers);
Task<> directAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                       const std::vector<PeerBuffers>& peers);
Task<> directReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                           const std::vector<PeerBuffers>& peers);

}  // namespace loom

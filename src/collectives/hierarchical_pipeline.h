// An AllReduce in steps on two hosts with the steps overlapped: the buffer's
// blocks (one per local index, as hierarchicalAllReduce cuts them) go in
// segments, and while the network carries one segment between the two
// hosts, the ranks of each host reduce the next one and gather the one
// before. One schedule does all three: a segment's bytes travel over the
// link while the schedule waits on shared memory for the next.
#pragma once

#include "collectives/collectives.h"
#include "collectives/ring_blocks.h"

namespace loom {

// The bytes of a segment for a team on two hosts, whose lanes (local index
// i < fewestRanksOnAHost on both hosts) exchange segments: half the link's
// FIFO, so that one segment can wait in it while the next is posted; 0
// where the team is not on two hosts. The team keeps it
// (Team::twoHostSegmentBytes).
size_t twoHostSegmentBytes(const Team& team);
// Half a FIFO of `shape`'s slots: a segment; 0 where it has fewer than two.
size_t halfFifoBytes(const SlotShape& shape);

// `blocks` as hierarchicalAllReduce cuts them (a block per host member, the
// first `lanes` of them the lanes', the others empty); `segment` in
// elements, from Team::twoHostSegmentBytes, not 0.
Task<> pipelinedTwoHostAllReduce(const Team& team, const CollectiveArgs& args, const BlockLayout& blocks, int lanes,
                                 size_t segment, const WaitContext& wait);

}  // namespace loom

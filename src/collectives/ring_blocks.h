// Ring ReduceScatter and AllGather over blocks of one buffer that differ in
// size by at most one element (EvenSplit): team index i owns block i. The
// pieces of hierarchical algorithms, whose blocks are cut from the caller's
// count rather than given per rank as the C API's collectives are.
#pragma once

#include <loom/loom.h>

#include "collectives/collectives.h"

namespace loom {

// Reduces every member's `in` block by block: block `team.rank` of the
// result lands at the same offset in `out` (which may be `in`). op is not
// avg: the caller divides once the whole reduction is done.
Task<> ringReduceScatterBlocks(const Team& team, const void* in, void* out, EvenSplit blocks, loomDataType_t dtype,
                               loomRedOp_t op, const WaitContext& wait);

// With this rank's block already in place in `buf`, fetches every other
// member's into its place.
Task<> ringAllGatherBlocks(const Team& team, void* buf, EvenSplit blocks, loomDataType_t dtype,
                           const WaitContext& wait);

}  // namespace loom

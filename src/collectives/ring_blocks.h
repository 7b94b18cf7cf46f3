// Ring ReduceScatter and AllGather over blocks of one buffer, wherever they
// lie: team index i owns the block at layout.offset[i] of layout.size[i]
// elements. The pieces of hierarchical algorithms, whose blocks are cut from
// the caller's count (BlockLayout::even) or sit at the places of other
// teams' ranks, rather than one per rank in rank order as the C API's
// collectives have them.
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <vector>

#include "collectives/collectives.h"

namespace loom {

struct BlockLayout {
  std::vector<size_t> offset;  // in elements, by team index
  std::vector<size_t> size;
  // `total` elements cut into `parts` blocks in order, sizes differing by at most one.
  static BlockLayout even(size_t total, int parts);
  // `parts` blocks of `size` elements, block i at at[i] * size.
  static BlockLayout at(const std::vector<int>& at, size_t size);
  size_t largest() const;
};

// Reduces every member's `in` block by block: the sum of block `team.rank`
// lands at `result` (which may be that block of `in`). op is not avg: the
// caller divides once the whole reduction is done.
Task<> ringReduceScatterBlocks(const Team& team, const void* in, const BlockLayout& blocks, void* result,
                               loomDataType_t dtype, loomRedOp_t op, MemoryKind memory, const WaitContext& wait);

// With this rank's block already in place in `buf`, fetches every other
// member's into its place.
Task<> ringAllGatherBlocks(const Team& team, void* buf, const BlockLayout& blocks, loomDataType_t dtype,
                           MemoryKind memory, const WaitContext& wait);

}  // namespace loom

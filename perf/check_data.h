// Correctness data for the perf suite: small integers that reduce exactly in
// any order and any dtype, so results are checked with zero tolerance
// (avg in floating types: 2 ulp, since the division rounds).
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <cstdint>

#include "collective_spec.h"

namespace loom::perf {

// Fills `count` elements of what `rank` sends, starting at element `first`.
void fillInput(void* buffer, size_t count, loomDataType_t dtype, loomRedOp_t op, bool reduces, int rank,
               size_t first = 0);

// Counts wrong elements of rank `rank`'s receive buffer after `spec` ran on
// nranks ranks with `count` (the table's count) and `root`.
int64_t countWrong(const CollectiveSpec& spec, const void* recv, size_t count, loomDataType_t dtype, loomRedOp_t op,
                   int root, int rank, int nranks);

}  // namespace loom::perf

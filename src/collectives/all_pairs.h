// One-step algorithms for small messages (see all_pairs.cc for why).
#pragma once

#include <cstddef>

#include "collectives/collectives.h"

namespace loom {

// Whether `bytes` per rank can go in one slot to every peer and is at most
// `limitBytes` (above it the ring's lower memory traffic wins).
bool fitsAllPairs(const Team& team, size_t bytes, size_t limitBytes);

void allPairsAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void allPairsBarrier(const Team& team, const WaitContext& wait);

}  // namespace loom

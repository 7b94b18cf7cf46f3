// One-step algorithms for small messages (see all_pairs.cc for why).
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/collectives.h"
#include "core/function_ref.h"

namespace loom {

// Whether `bytes` per rank can go in one slot to every peer and is at most
// `limitBytes` (above it the ring's lower memory traffic wins).
bool fitsAllPairs(const Team& team, size_t bytes, size_t limitBytes);

void allPairsAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void allPairsBarrier(const Team& team, const WaitContext& wait);

// Every rank sends `bytes` (at most a slot) from `mine` to every peer and
// receives theirs: all[r * bytes] holds rank r's, this rank's own included.
// `received(peer)` runs as each peer's message arrives, so a check can fail
// at the first bad one instead of waiting for the rest. Returning means every
// rank has entered the exchange.
void allPairsExchange(const Team& team, const void* mine, size_t bytes, void* all, const WaitContext& wait,
                      FunctionRef<void(int)> received);

template <typename Message>
std::vector<Message> allPairsExchange(const Team& team, const Message& mine, const WaitContext& wait,
                                      FunctionRef<void(int)> received = [](int) {}) {
  std::vector<Message> all(team.nranks);
  allPairsExchange(team, &mine, sizeof(Message), all.data(), wait, received);
  return all;
}

}  // namespace loom

// One-step algorithms for small messages (see all_pairs.cc for why).
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/collectives.h"

namespace loom {

// Whether `bytes` per rank can go in one slot to every peer and is at most
// `limitBytes` (above it the ring's lower memory traffic wins).
bool fitsAllPairs(const Team& team, size_t bytes, size_t limitBytes);

// Every rank combines the members' inputs in team order.
Task<> allPairsAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> allPairsBarrier(const Team& team, const WaitContext& wait);

// Every rank sends `bytes` (at most a slot) from `mine` to every peer and
// receives theirs: all[r * bytes] holds rank r's, this rank's own included.
// A peer that called something else fails the exchange on its message's
// label (message_label.h). Returning means every rank has entered it.
Task<> allPairsExchange(const Team& team, const void* mine, size_t bytes, void* all, const WaitContext& wait);

template <typename Message>
Task<std::vector<Message>> allPairsExchange(const Team& team, Message mine, const WaitContext& wait) {
  std::vector<Message> all(team.nranks);
  co_await allPairsExchange(team, &mine, sizeof(Message), all.data(), wait);
  co_return all;
}

}  // namespace loom

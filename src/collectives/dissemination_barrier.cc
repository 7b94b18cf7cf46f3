// Dissemination Barrier: in round k every rank tells the rank 2^k ahead of
// it on the ring that it has arrived, and waits to hear from the rank 2^k
// behind. After ceil(log2 P) rounds each rank has heard, directly or
// through the chain of rounds, from every other: P log P empty messages
// in all, where the all-pairs barrier sends P(P-1) and the ring needs 2P
// hops one after another.
#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {

Task<> disseminationBarrier(const Team& team, const WaitContext& wait) {
  Primitives prims(wait, loomUint8, loomSum, team.nranks, MemoryKind::kHost);  // empty messages
  for (int distance = 1; distance < team.nranks; distance *= 2) {
    co_await prims.send(team.sendTo(team.ringRank(team.ringPosition + distance)), nullptr, 0);
    co_await prims.recv(team.recvFrom(team.ringRank(team.ringPosition - distance)), nullptr, 0);
  }
}

}  // namespace loom

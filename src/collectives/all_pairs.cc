// Small-message algorithms in one step: every rank writes its data straight
// into a slot of every peer, then reads all of theirs. A ring needs 2(n-1)
// hops of wake-ups for AllReduce; on oversubscribed cores each hop is a
// futex wake and a context switch, so for a few kilobytes one round trip
// beats the ring's bandwidth advantage.
#include "collectives/all_pairs.h"

#include <cstring>

#include "base/dtype_size.h"
#include "collectives/primitives.h"

namespace loom {

bool fitsAllPairs(const Team& team, size_t bytes, size_t limitBytes) {
  return team.nranks > 1 && bytes <= limitBytes && bytes <= team.slotBytes;
}

Task<> allPairsAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const Executor& exec = executorFor(args.memory);
  const size_t bytes = args.count * dtypeSize(args.dtype);
  for (int peer = 0; peer < team.nranks; ++peer) {
    if (peer == team.rank) continue;
    SendConnection& to = team.sendTo(peer);
    void* slot = co_await to.acquire(wait);
    exec.copy(slot, args.sendbuf, bytes);
    to.post(bytes);
  }
  // In place, out overwrites this rank's input before its turn comes: a
  // copy keeps it (a posted slot is the peer's, which may reuse it at once).
  const void* ownInput = args.sendbuf;
  if (args.sendbuf == args.recvbuf && team.rank != 0) {
    team.reduceScratch.resize(bytes);
    exec.copy(team.reduceScratch.data(), args.sendbuf, bytes);
    ownInput = team.reduceScratch.data();
  }
  // Every rank combines the inputs in one order, so all ranks get bitwise
  // the same floating-point result.
  void* out = args.recvbuf;
  for (int r = 0; r < team.nranks; ++r) {
    const void* input = ownInput;
    RecvConnection* from = nullptr;
    if (r != team.rank) {
      from = &team.recvFrom(r);
      input = co_await from->acquire(wait, bytes);
    }
    if (r == 0) {
      if (input != out) exec.copy(out, input, bytes);  // rank 0 in place has its input there
    } else {
      exec.reduce(out, out, input, args.count, args.dtype, args.op);
    }
    if (from != nullptr) from->release();
  }
  if (args.op == loomAvg) exec.divide(out, args.count, args.dtype, team.nranks);
}

// Empty messages: their labels (message_label.h) carry the collective, so a
// peer whose calls went out of step fails here rather than passing the barrier.
Task<> allPairsBarrier(const Team& team, const WaitContext& wait) {
  for (int peer = 0; peer < team.nranks; ++peer) {
    if (peer == team.rank) continue;
    SendConnection& to = team.sendTo(peer);
    co_await to.acquire(wait);
    to.post(0);
  }
  for (int peer = 0; peer < team.nranks; ++peer) {
    if (peer == team.rank) continue;
    RecvConnection& from = team.recvFrom(peer);
    co_await from.acquire(wait, 0);
    from.release();
  }
}

Task<> allPairsExchange(const Team& team, const void* mine, size_t bytes, void* all, const WaitContext& wait) {
  char* into = static_cast<char*>(all);
  std::memcpy(into + team.rank * bytes, mine, bytes);
  for (int peer = 0; peer < team.nranks; ++peer) {
    if (peer == team.rank) continue;
    SendConnection& to = team.sendTo(peer);
    void* slot = co_await to.acquire(wait);
    to.postFrom(slot, mine, bytes);
  }
  for (int peer = 0; peer < team.nranks; ++peer) {
    if (peer == team.rank) continue;
    RecvConnection& from = team.recvFrom(peer);
    std::memcpy(into + peer * bytes, co_await from.acquire(wait, bytes), bytes);
    from.release();
  }
}

}  // namespace loom

// Ring AllReduce: a reduce-scatter pass then an all-gather pass around the
// ring, pipelined. The buffer is cut into loops of nranks slot-sized blocks;
// while one loop's blocks travel, ranks are already working on the next, so
// every link of the ring is busy at once.
#include <algorithm>

#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {

Task<> ringAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  if (team.nranks == 1) {
    prims.localReduceCopy(in, out, args.count);
    co_return;
  }
  SendConnection& next = team.next();
  RecvConnection& prev = team.prev();
  const int n = team.nranks;
  const int p = team.ringPosition;
  const size_t elem = prims.elementSize();
  const size_t chunk = prims.chunkElements(team.slotBytes);
  const size_t loopElements = chunk * n;

  for (size_t loopStart = 0; loopStart < args.count; loopStart += loopElements) {
    EvenSplit blocks{std::min(loopElements, args.count - loopStart), n};
    auto offset = [&](int position) { return (loopStart + blocks.blockOffset(((position % n) + n) % n)) * elem; };
    auto size = [&](int position) { return blocks.blockSize(((position % n) + n) % n); };

    // Reduce-scatter: after n-1 steps position p holds block p+1 fully reduced.
    co_await prims.send(next, in + offset(p), size(p));
    for (int step = 1; step < n - 1; ++step)
      co_await prims.recvReduceSend(prev, next, in + offset(p - step), size(p - step));
    co_await prims.recvReduceCopySend(prev, next, in + offset(p + 1), out + offset(p + 1), size(p + 1));

    // All-gather: pass the reduced blocks on until every position has all.
    for (int step = 1; step < n - 1; ++step)
      co_await prims.recvCopySend(prev, next, out + offset(p + 1 - step), size(p + 1 - step));
    co_await prims.recv(prev, out + offset(p + 2), size(p + 2));
  }
}

}  // namespace loom

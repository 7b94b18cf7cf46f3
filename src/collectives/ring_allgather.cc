// Ring AllGather: each rank's block travels n-1 hops around the ring, one
// slot-sized chunk at a time so consecutive chunks overlap on the links.
#include <algorithm>

#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {

Task<> ringAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t elem = prims.elementSize();
  const size_t blockBytes = args.count * elem;
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  auto blockOf = [&](int rank) { return out + static_cast<size_t>(rank) * blockBytes; };
  if (team.nranks == 1) {
    prims.copy(out, in, blockBytes);
    co_return;
  }
  SendConnection& next = team.next();
  RecvConnection& prev = team.prev();
  const int n = team.nranks;
  const int p = team.ringPosition;
  const size_t chunk = prims.chunkElements(team.slotBytes);

  for (size_t start = 0; start < args.count; start += chunk) {
    const size_t len = std::min(chunk, args.count - start);
    const size_t at = start * elem;
    co_await prims.send(next, in + at, len);
    prims.copy(blockOf(team.rank) + at, in + at, len * elem);
    for (int step = 1; step < n - 1; ++step)
      co_await prims.recvCopySend(prev, next, blockOf(team.ringRank(p - step)) + at, len);
    co_await prims.recv(prev, blockOf(team.ringRank(p + 1)) + at, len);
  }
}

}  // namespace loom

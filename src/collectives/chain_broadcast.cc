// Broadcast and Reduce as pipelined chains along the ring: Broadcast starts
// at the root, Reduce ends there. Each chunk takes n-1 hops, but chunks
// follow each other closely, so large buffers move at link speed.
#include <algorithm>

#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {

Task<> chainBroadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t elem = prims.elementSize();
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  const bool isRoot = team.rank == args.root;
  if (team.nranks == 1) {
    prims.copy(out, in, args.count * elem);
    co_return;
  }
  const int hops = team.hopsFrom(args.root);
  const bool isLast = hops == team.nranks - 1;
  SendConnection* next = isLast ? nullptr : &team.next();
  RecvConnection* prev = isRoot ? nullptr : &team.prev();
  const size_t chunk = prims.chunkElements(team.slotBytes);

  for (size_t start = 0; start < args.count; start += chunk) {
    const size_t len = std::min(chunk, args.count - start);
    const size_t at = start * elem;
    if (isRoot) {
      co_await prims.send(*next, in + at, len);
      prims.copy(out + at, in + at, len * elem);
    } else if (isLast) {
      co_await prims.recv(*prev, out + at, len);
    } else {
      co_await prims.recvCopySend(*prev, *next, out + at, len);
    }
  }
}

Task<> chainReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t elem = prims.elementSize();
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  const bool isRoot = team.rank == args.root;
  if (team.nranks == 1) {
    prims.localReduceCopy(in, out, args.count);
    co_return;
  }
  // The chain starts just after the root and ends at it.
  const int hops = team.hopsFrom(args.root);
  const bool isFirst = hops == 1;
  SendConnection* next = isRoot ? nullptr : &team.next();
  RecvConnection* prev = isFirst ? nullptr : &team.prev();
  const size_t chunk = prims.chunkElements(team.slotBytes);

  for (size_t start = 0; start < args.count; start += chunk) {
    const size_t len = std::min(chunk, args.count - start);
    const size_t at = start * elem;
    if (isFirst) {
      co_await prims.send(*next, in + at, len);
    } else if (isRoot) {
      co_await prims.recvReduceCopy(*prev, in + at, out + at, len);
    } else {
      co_await prims.recvReduceSend(*prev, *next, in + at, len);
    }
  }
}

}  // namespace loom

// Gather and Scatter as the root's exchanges with each rank in turn, over
// the pair's own connection, a slot at a time: the root's link carries
// every block once, which no tree beats for the bytes the root itself must
// take in or give out. A rank other than the root moves one block and is
// done. (A tree would save the root's latency at many ranks and tiny
// blocks: for the algorithms work.)
#include <algorithm>

#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {

Task<> directGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t blockBytes = args.count * prims.elementSize();
  const size_t chunk = prims.chunkElements(team.slotBytes);
  const int root = args.root;
  const char* in = static_cast<const char*>(args.sendbuf);
  if (team.rank != root) {
    SendConnection& to = team.sendTo(root);
    for (size_t start = 0; start < args.count; start += chunk)
      co_await prims.send(to, in + start * prims.elementSize(), std::min(chunk, args.count - start));
    co_return;
  }
  char* out = static_cast<char*>(args.recvbuf);
  if (in != out + blockBytes * root) prims.copy(out + blockBytes * root, in, blockBytes);
  // Starting after the root, as the ranks are numbered around it.
  for (int k = 1; k < team.nranks; ++k) {
    const int from = (root + k) % team.nranks;
    RecvConnection& conn = team.recvFrom(from);
    for (size_t start = 0; start < args.count; start += chunk)
      co_await prims.recv(conn, out + blockBytes * from + start * prims.elementSize(),
                          std::min(chunk, args.count - start));
  }
}

Task<> directScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t blockBytes = args.count * prims.elementSize();
  const size_t chunk = prims.chunkElements(team.slotBytes);
  const int root = args.root;
  char* out = static_cast<char*>(args.recvbuf);
  if (team.rank != root) {
    RecvConnection& from = team.recvFrom(root);
    for (size_t start = 0; start < args.count; start += chunk)
      co_await prims.recv(from, out + start * prims.elementSize(), std::min(chunk, args.count - start));
    co_return;
  }
  const char* in = static_cast<const char*>(args.sendbuf);
  if (out != in + blockBytes * root) prims.copy(out, in + blockBytes * root, blockBytes);
  for (int k = 1; k < team.nranks; ++k) {
    const int to = (root + k) % team.nranks;
    SendConnection& conn = team.sendTo(to);
    for (size_t start = 0; start < args.count; start += chunk)
      co_await prims.send(conn, in + blockBytes * to + start * prims.elementSize(),
                          std::min(chunk, args.count - start));
  }
}

}  // namespace loom

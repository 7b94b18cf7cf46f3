// Send and Recv: the point-to-point FIFO to or from one peer, chunk by
// chunk. The engine runs a pair's Sends one after another in posting order,
// and a pair's Recvs of one tag likewise, so messages of one tag between a
// pair match in posting order, as in MPI and NCCL, while every peer's
// queue moves independently. Recvs (p2p_recv.cc) of different tags run side
// by side and share the FIFO through the peer's inbox. An empty message
// is still one message, as in MPI: it carries its label, so it matches
// exactly one Recv, and a Recv that expects elements from it fails naming
// both counts instead of reading the next message.
#include <algorithm>

#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {

Task<> pointToPointSend(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  SendConnection& to = team.sendTo(args.root, Channel::kPointToPoint);
  const size_t chunk = prims.chunkElements(to.slotBytes());
  const char* in = static_cast<const char*>(args.sendbuf);
  size_t start = 0;
  do {
    co_await prims.send(to, in + start * prims.elementSize(), std::min(chunk, args.count - start));
  } while ((start += chunk) < args.count);
}

// Two trips of an empty slot around the ring: after the first every rank
// has arrived; the second tells every rank so.
Task<> ringBarrier(const Team& team, const WaitContext& wait) {
  if (team.nranks == 1) co_return;
  Primitives prims(wait, loomUint8, loomSum, team.nranks, MemoryKind::kHost);  // empty messages
  SendConnection& next = team.next();
  RecvConnection& prev = team.prev();
  if (team.ringPosition == 0) {
    co_await prims.send(next, nullptr, 0);
    co_await prims.recvCopySend(prev, next, nullptr, 0);
    co_await prims.recv(prev, nullptr, 0);
  } else {
    co_await prims.recvCopySend(prev, next, nullptr, 0);
    co_await prims.recvCopySend(prev, next, nullptr, 0);
  }
}

}  // namespace loom

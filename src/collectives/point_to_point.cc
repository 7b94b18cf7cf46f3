// Send and Recv: the FIFO to or from one peer, chunk by chunk. Messages
// between a pair match in issue order, as in NCCL.
#include <algorithm>

#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {

void pointToPointSend(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks);
  SendConnection& to = team.transport->sendTo(args.root);
  const size_t chunk = prims.chunkElements(to.slotBytes());
  const char* in = static_cast<const char*>(args.sendbuf);
  for (size_t start = 0; start < args.count; start += chunk)
    prims.send(to, in + start * prims.elementSize(), std::min(chunk, args.count - start));
}

void pointToPointRecv(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks);
  RecvConnection& from = team.transport->recvFrom(args.root);
  const size_t chunk = prims.chunkElements(from.slotBytes());
  char* out = static_cast<char*>(args.recvbuf);
  for (size_t start = 0; start < args.count; start += chunk)
    prims.recv(from, out + start * prims.elementSize(), std::min(chunk, args.count - start));
}

// Two trips of an empty slot around the ring: after the first every rank
// has arrived; the second tells every rank so.
void ringBarrier(const Team& team, const WaitContext& wait) {
  if (team.nranks == 1) return;
  Primitives prims(wait, loomUint8, loomSum, team.nranks);
  SendConnection& next = team.next();
  RecvConnection& prev = team.prev();
  if (team.ringPosition == 0) {
    prims.send(next, nullptr, 0);
    prims.recvCopySend(prev, next, nullptr, 0);
    prims.recv(prev, nullptr, 0);
  } else {
    prims.recvCopySend(prev, next, nullptr, 0);
    prims.recvCopySend(prev, next, nullptr, 0);
  }
}

}  // namespace loom

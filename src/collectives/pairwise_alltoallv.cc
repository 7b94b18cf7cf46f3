// AllToAllv: AllToAll's pairwise exchange with a count per pair. In step k
// rank r sends to r+k and receives from r-k, a chunk each way in turn, so
// no rank fills a FIFO its peer is not draining. Each direction's messages
// carry that pair's count in their label: where ranks disagree on what one
// sends the other, the receiver fails on the pair's first message, naming
// both counts. A pair with nothing to move still exchanges one empty message,
// so that disagreement is found there too rather than as a timeout.
#include <algorithm>

#include "base/dtype_size.h"
#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {
namespace {

// Moves `count` elements at `at` over one connection, a chunk per step,
// at least one (empty) message.
struct PairStream {
  size_t count;
  size_t done = 0;
  bool started = false;
  bool finished() const { return started && done >= count; }
};

}  // namespace

Task<> pairwiseAllToAllv(const Team& team, const CollectiveArgs& args, const VariableBlocks& blocks,
                         const WaitContext& wait) {
  const int n = team.nranks;
  const size_t elem = dtypeSize(args.dtype);
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  const int me = team.rank;
  if (blocks.sendCounts[me] > 0)
    Primitives(wait, args.dtype, args.op, n, args.memory)
        .copy(out + blocks.recvDispls[me] * elem, in + blocks.sendDispls[me] * elem, blocks.sendCounts[me] * elem);

  for (int k = 1; k < n; ++k) {
    const int to = (me + k) % n, from = (me - k + n) % n;
    // This pair's labels: the count each side moves.
    WaitContext sendWait = wait, recvWait = wait;
    sendWait.label.count = blocks.sendCounts[to];
    recvWait.label.count = blocks.recvCounts[from];
    Primitives sending(sendWait, args.dtype, args.op, n, args.memory);
    Primitives receiving(recvWait, args.dtype, args.op, n, args.memory);
    SendConnection& sendConn = team.sendTo(to);
    RecvConnection& recvConn = team.recvFrom(from);
    const size_t chunk = sending.chunkElements(team.slotBytes);
    PairStream out_{blocks.sendCounts[to]}, in_{blocks.recvCounts[from]};
    while (!out_.finished() || !in_.finished()) {
      if (!out_.finished()) {
        const size_t len = std::min(chunk, out_.count - out_.done);
        co_await sending.send(sendConn, in + (blocks.sendDispls[to] + out_.done) * elem, len);
        out_.done += len;
        out_.started = true;
      }
      if (!in_.finished()) {
        const size_t len = std::min(chunk, in_.count - in_.done);
        co_await receiving.recv(recvConn, out + (blocks.recvDispls[from] + in_.done) * elem, len);
        in_.done += len;
        in_.started = true;
      }
    }
  }
}

}  // namespace loom

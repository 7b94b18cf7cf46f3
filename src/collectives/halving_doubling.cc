// Recursive halving and doubling AllReduce (Rabenseifner's): a
// reduce-scatter in log2(P) steps, each exchanging half of what is left
// with a partner, then an all-gather retracing them. Every rank moves
// 2(P-1)/P of the buffer, as on the ring, but a message crosses log2(P)
// hops instead of 2(P-1): at many ranks small and medium sizes finish in
// far fewer wake-ups.
//
// Rank counts that are not a power of two fold in: with P = 2^k + r, the
// first 2r ranks of the ring order pair up, the even one of each pair hands
// its input to the odd one and waits, the 2^k remaining ranks run the
// exchanges, and the odd ones hand the result back. Partners are chosen by
// the low bits first, so the largest exchanges are between neighbours in
// the ring order (the same socket, where the ring placed them so).
#include <algorithm>

#include "collectives/collectives.h"
#include "collectives/primitives.h"
#include "collectives/ring_blocks.h"

namespace loom {
namespace {

// Elements [offset, offset + count) of the buffer.
struct Stretch {
  size_t offset = 0;
  size_t count = 0;
};

// Blocks [first, last) of `blocks` as one stretch (they are contiguous).
Stretch stretchOf(const BlockLayout& blocks, int first, int last) {
  return {blocks.offset[first], blocks.offset[last - 1] + blocks.size[last - 1] - blocks.offset[first]};
}

// Sends `count` elements from `src` to `to`, slot by slot.
Task<> sendAll(Primitives& prims, size_t chunk, SendConnection& to, const char* src, size_t count) {
  for (size_t at = 0; at < count; at += chunk)
    co_await prims.send(to, src + at * prims.elementSize(), std::min(chunk, count - at));
}

// Exchanges with one partner slot by slot, a send then a receive, so that
// neither side waits on a full FIFO while the other waits on it: `mine`
// goes out, the partner's `theirs` elements land at `into`, reduced into
// what is there (`reduce`) or copied over it.
Task<> swapWith(Primitives& prims, size_t chunk, const Team& team, int partner, const char* mine, size_t mineCount,
                char* into, size_t theirsCount, bool reduce) {
  SendConnection& to = team.sendTo(partner);
  RecvConnection& from = team.recvFrom(partner);
  const size_t elem = prims.elementSize();
  for (size_t sent = 0, received = 0; sent < mineCount || received < theirsCount;) {
    if (sent < mineCount) {
      const size_t n = std::min(chunk, mineCount - sent);
      co_await prims.send(to, mine + sent * elem, n);
      sent += n;
    }
    if (received < theirsCount) {
      const size_t n = std::min(chunk, theirsCount - received);
      char* at = into + received * elem;
      if (reduce)
        co_await prims.recvReduce(from, at, at, n);
      else
        co_await prims.recv(from, at, n);
      received += n;
    }
  }
}

int largestPowerOfTwoUpTo(int n) {
  int p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

}  // namespace

Task<> halvingDoublingAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  const int n = team.nranks;
  if (n == 1) {
    prims.localReduceCopy(in, out, args.count);
    co_return;
  }
  const size_t elem = prims.elementSize();
  const size_t chunk = prims.chunkElements(team.slotBytes);
  const int position = team.ringPosition;
  const int exchanging = largestPowerOfTwoUpTo(n);
  const int folded = n - exchanging;  // pairs whose even member sits out
  // Virtual rank v (0 .. exchanging-1) runs at this ring position.
  auto positionOf = [&](int v) { return v < folded ? 2 * v + 1 : v + folded; };
  auto finishAverage = [&] {
    if (args.op == loomAvg) executorFor(args.memory).divide(out, args.count, args.dtype, n);
  };

  if (position < 2 * folded && position % 2 == 0) {
    const int partner = team.ringRank(position + 1);
    co_await sendAll(prims, chunk, team.sendTo(partner), in, args.count);
    RecvConnection& from = team.recvFrom(partner);
    for (size_t at = 0; at < args.count; at += chunk)
      co_await prims.recv(from, out + at * elem, std::min(chunk, args.count - at));
    finishAverage();
    co_return;
  }
  if (position < 2 * folded) {
    RecvConnection& from = team.recvFrom(team.ringRank(position - 1));
    for (size_t at = 0; at < args.count; at += chunk)
      co_await prims.recvReduce(from, in + at * elem, out + at * elem, std::min(chunk, args.count - at));
  } else {
    prims.copy(out, in, args.count * elem);
  }
  const int me = position < 2 * folded ? position / 2 : position - folded;

  // Reduce-scatter: each step keeps half of the blocks still held, the
  // half the partner does not keep, and takes the partner's share of it.
  const BlockLayout blocks = BlockLayout::even(args.count, exchanging);
  int first = 0, last = exchanging;
  for (int bit = 1; bit < exchanging; bit <<= 1) {
    const int partner = team.ringRank(positionOf(me ^ bit));
    const int middle = (first + last) / 2;
    const bool upper = (me & bit) != 0;
    const Stretch keep = upper ? stretchOf(blocks, middle, last) : stretchOf(blocks, first, middle);
    const Stretch give = upper ? stretchOf(blocks, first, middle) : stretchOf(blocks, middle, last);
    co_await swapWith(prims, chunk, team, partner, out + give.offset * elem, give.count, out + keep.offset * elem,
                      keep.count, true);
    if (upper)
      first = middle;
    else
      last = middle;
  }

  // All-gather: the same partners in reverse, each step doubling what is
  // held by the partner's half, fully reduced.
  for (int bit = exchanging / 2; bit >= 1; bit >>= 1) {
    const int partner = team.ringRank(positionOf(me ^ bit));
    const int span = last - first;
    const bool upper = (me & bit) != 0;
    const int theirFirst = upper ? first - span : last;
    const Stretch mine = stretchOf(blocks, first, last);
    const Stretch theirs = stretchOf(blocks, theirFirst, theirFirst + span);
    co_await swapWith(prims, chunk, team, partner, out + mine.offset * elem, mine.count, out + theirs.offset * elem,
                      theirs.count, false);
    first = std::min(first, theirFirst);
    last = first + 2 * span;
  }

  if (position < 2 * folded) co_await sendAll(prims, chunk, team.sendTo(team.ringRank(position - 1)), out, args.count);
  finishAverage();
}

}  // namespace loom

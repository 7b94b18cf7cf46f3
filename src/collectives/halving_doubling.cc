// Recursive halving and doubling AllReduce (Rabenseifner's): a
// reduce-scatter in log2(P) steps, each exchanging half of what is left
// with a partner, then an all-gather retracing them; the halving alone as
// ReduceScatter, and the doubling alone as AllGather. Every rank moves
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

// `v` with its lowest `bits` bits in reverse order.
int reverseBits(int v, int bits) {
  int r = 0;
  for (int b = 0; b < bits; ++b) r |= ((v >> b) & 1) << (bits - 1 - b);
  return r;
}

// How P = 2^k + r ranks fold into 2^k exchanging virtual ranks: the first
// 2r ring positions pair up, the even one of each pair sits out, the odd
// one runs as a virtual rank for both.
struct Folding {
  explicit Folding(int n) : exchanging(largestPowerOfTwoUpTo(n)), folded(n - exchanging) {}
  // The ring position virtual rank v runs at.
  int positionOf(int v) const { return v < folded ? 2 * v + 1 : v + folded; }
  bool sitsOut(int position) const { return position < 2 * folded && position % 2 == 0; }
  bool takesFolded(int position) const { return position < 2 * folded; }  // and does not sit out
  int virtualRankAt(int position) const { return takesFolded(position) ? position / 2 : position - folded; }

  int exchanging;
  int folded;
};

// The ReduceScatter's and AllGather's layout of the whole buffer:
// splitting by the low bits of the virtual rank first leaves virtual rank v
// slot bitreverse(v), which holds the block of v's rank, then that of the
// rank folded into v.
class SlotOrder {
 public:
  explicit SlotOrder(const Folding& folding) : folding_(folding), start_(folding.exchanging + 1, 0) {
    while ((1 << bits_) < folding.exchanging) ++bits_;
    for (int s = 0; s < folding.exchanging; ++s) start_[s + 1] = start_[s] + (virtualRank(s) < folding.folded ? 2 : 1);
  }
  int slotOf(int v) const { return reverseBits(v, bits_); }
  int virtualRank(int slot) const { return reverseBits(slot, bits_); }
  // Slot s's first block, and how many it holds.
  int firstBlock(int slot) const { return start_[slot]; }
  int blocks(int slot) const { return start_[slot + 1] - start_[slot]; }
  // The ring position whose block is the slot's `j`th.
  int positionOfBlock(int slot, int j) const { return folding_.positionOf(virtualRank(slot)) - j; }
  // Slots [first, last) in elements, with blocks of `count` elements.
  Stretch stretch(int first, int last, size_t count) const {
    return {static_cast<size_t>(start_[first]) * count, static_cast<size_t>(start_[last] - start_[first]) * count};
  }

 private:
  Folding folding_;
  int bits_ = 0;
  std::vector<int> start_;  // start_[s]: slot s's first block; start_[exchanging] == P
};

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
  const Folding folding(n);
  const int exchanging = folding.exchanging;
  auto finishAverage = [&] {
    if (args.op == loomAvg) executorFor(args.memory).divide(out, args.count, args.dtype, n);
  };

  if (folding.sitsOut(position)) {
    const int partner = team.ringRank(position + 1);
    co_await prims.sendAll(team.sendTo(partner), in, args.count, chunk);
    co_await prims.recvAll(team.recvFrom(partner), out, args.count, chunk);
    finishAverage();
    co_return;
  }
  if (folding.takesFolded(position)) {
    RecvConnection& from = team.recvFrom(team.ringRank(position - 1));
    for (size_t at = 0; at < args.count; at += chunk)
      co_await prims.recvReduce(from, in + at * elem, out + at * elem, std::min(chunk, args.count - at));
  } else {
    prims.copy(out, in, args.count * elem);
  }
  const int me = folding.virtualRankAt(position);

  // Reduce-scatter: each step keeps half of the blocks still held, the
  // half the partner does not keep, and takes the partner's share of it.
  const BlockLayout blocks = BlockLayout::even(args.count, exchanging);
  int first = 0, last = exchanging;
  for (int bit = 1; bit < exchanging; bit <<= 1) {
    const int partner = team.ringRank(folding.positionOf(me ^ bit));
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
    const int partner = team.ringRank(folding.positionOf(me ^ bit));
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

  if (folding.takesFolded(position))
    co_await prims.sendAll(team.sendTo(team.ringRank(position - 1)), out, args.count, chunk);
  finishAverage();
}

// ReduceScatter: the halving above, on blocks laid out so that each
// rank's range ends on its own result: the input is first copied into slot
// order (SlotOrder).
Task<> halvingDoublingReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  const int n = team.nranks;
  const size_t count = args.count;  // each rank's block
  if (n == 1) {
    prims.localReduceCopy(in, out, count);
    co_return;
  }
  const size_t elem = prims.elementSize();
  const size_t blockBytes = count * elem;
  const size_t total = static_cast<size_t>(n) * count;
  const size_t chunk = prims.chunkElements(team.slotBytes);
  const int position = team.ringPosition;
  const Folding folding(n);
  const int exchanging = folding.exchanging;
  auto finishAverage = [&](char* block) {
    if (args.op == loomAvg) executorFor(args.memory).divide(block, count, args.dtype, n);
  };

  if (folding.sitsOut(position)) {
    const int partner = team.ringRank(position + 1);
    co_await prims.sendAll(team.sendTo(partner), in, total, chunk);
    co_await prims.recvAll(team.recvFrom(partner), out, count, chunk);
    finishAverage(out);
    co_return;
  }
  // Scratch: the blocks in slot order, after (for a rank a folded rank
  // hands its input to) the input with that rank's added, in rank order.
  const bool takesFolded = folding.takesFolded(position);
  std::vector<char>& scratch = team.reduceScratch;
  scratch.resize((takesFolded ? 2 : 1) * total * elem);
  char* summed = scratch.data();
  char* ordered = scratch.data() + (takesFolded ? total * elem : 0);
  const char* source = in;
  if (takesFolded) {
    RecvConnection& from = team.recvFrom(team.ringRank(position - 1));
    for (size_t at = 0; at < total; at += chunk)
      co_await prims.recvReduce(from, in + at * elem, summed + at * elem, std::min(chunk, total - at));
    source = summed;
  }
  const int me = folding.virtualRankAt(position);
  const SlotOrder order(folding);
  for (int s = 0; s < exchanging; ++s)
    for (int j = 0; j < order.blocks(s); ++j)
      prims.copy(ordered + static_cast<size_t>(order.firstBlock(s) + j) * blockBytes,
                 source + static_cast<size_t>(team.ringRank(order.positionOfBlock(s, j))) * blockBytes, blockBytes);
  auto stretch = [&](int first, int last) { return order.stretch(first, last, count); };

  int first = 0, last = exchanging;
  for (int bit = 1; bit < exchanging; bit <<= 1) {
    const int partner = team.ringRank(folding.positionOf(me ^ bit));
    const int middle = (first + last) / 2;
    const bool upper = (me & bit) != 0;
    const Stretch keep = upper ? stretch(middle, last) : stretch(first, middle);
    const Stretch give = upper ? stretch(first, middle) : stretch(middle, last);
    co_await swapWith(prims, chunk, team, partner, ordered + give.offset * elem, give.count,
                      ordered + keep.offset * elem, keep.count, true);
    if (upper)
      first = middle;
    else
      last = middle;
  }
  // Slot `first` holds this rank's block, then the folded rank's.
  const char* mine = ordered + static_cast<size_t>(order.firstBlock(first)) * blockBytes;
  prims.copy(out, mine, blockBytes);
  if (takesFolded) co_await prims.sendAll(team.sendTo(team.ringRank(position - 1)), mine + blockBytes, count, chunk);
  finishAverage(out);
}

// AllGather: the doubling above on the ReduceScatter's slot order, where
// virtual rank v starts with slot bitreverse(v) (its block, then that of
// the rank folded into it) and each step doubles the slots it holds; the
// slots then go to their ranks' places in the output, and folded ranks get
// the whole result from their partners.
Task<> halvingDoublingAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  const int n = team.nranks;
  const size_t count = args.count;  // each rank's block
  const size_t elem = prims.elementSize();
  const size_t blockBytes = count * elem;
  const size_t total = static_cast<size_t>(n) * count;
  const size_t chunk = prims.chunkElements(team.slotBytes);
  const int position = team.ringPosition;
  const Folding folding(n);

  if (folding.sitsOut(position)) {
    // In place the input is this rank's block of the output: sent before
    // anything lands there.
    const int partner = team.ringRank(position + 1);
    co_await prims.sendAll(team.sendTo(partner), in, count, chunk);
    co_await prims.recvAll(team.recvFrom(partner), out, total, chunk);
    co_return;
  }
  const bool takesFolded = folding.takesFolded(position);
  const int me = folding.virtualRankAt(position);
  const SlotOrder order(folding);
  auto stretch = [&](int first, int last) { return order.stretch(first, last, count); };
  std::vector<char>& ordered = team.reduceScratch;
  ordered.resize(total * elem);
  int first = order.slotOf(me), last = first + 1;
  char* own = ordered.data() + static_cast<size_t>(order.firstBlock(first)) * blockBytes;
  prims.copy(own, in, blockBytes);
  if (takesFolded) co_await prims.recvAll(team.recvFrom(team.ringRank(position - 1)), own + blockBytes, count, chunk);
  for (int bit = folding.exchanging / 2; bit >= 1; bit >>= 1) {
    const int partner = team.ringRank(folding.positionOf(me ^ bit));
    const int span = last - first;
    const bool upper = (me & bit) != 0;
    const int theirFirst = upper ? first - span : last;
    const Stretch mine = stretch(first, last);
    const Stretch theirs = stretch(theirFirst, theirFirst + span);
    co_await swapWith(prims, chunk, team, partner, ordered.data() + mine.offset * elem, mine.count,
                      ordered.data() + theirs.offset * elem, theirs.count, false);
    first = std::min(first, theirFirst);
    last = first + 2 * span;
  }
  for (int s = 0; s < folding.exchanging; ++s)
    for (int j = 0; j < order.blocks(s); ++j)
      prims.copy(out + static_cast<size_t>(team.ringRank(order.positionOfBlock(s, j))) * blockBytes,
                 ordered.data() + static_cast<size_t>(order.firstBlock(s) + j) * blockBytes, blockBytes);
  if (takesFolded) co_await prims.sendAll(team.sendTo(team.ringRank(position - 1)), out, total, chunk);
}

}  // namespace loom

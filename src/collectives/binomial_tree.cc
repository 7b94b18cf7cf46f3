// Broadcast and Reduce along the binomial tree of binomial.h, by chunks of
// a slot: ceil(log2 n) rounds, one message a rank a round, where a binary
// tree sends two a node and a chain takes n - 1 rounds.
#include <algorithm>
#include <vector>

#include "collectives/binomial.h"
#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {
namespace {

// This rank's binomial tree for `root`, with ranks in place of indices.
BinomialLinks binomialFor(const Team& team, int root) {
  const int rootPosition = team.positionOf(root);
  BinomialLinks tree = binomialLinks(team.nranks, team.hopsFrom(root));
  if (tree.parent >= 0) tree.parent = team.ringRank(rootPosition + tree.parent);
  for (int c = 0; c < tree.childCount; ++c) tree.children[c] = team.ringRank(rootPosition + tree.children[c]);
  return tree;
}

}  // namespace

Task<> binomialBroadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t elem = prims.elementSize();
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  const BinomialLinks tree = binomialFor(team, args.root);
  const size_t chunk = prims.chunkElements(team.slotBytes);
  for (size_t start = 0; start < args.count; start += chunk) {
    const size_t len = std::min(chunk, args.count - start);
    const size_t at = start * elem;
    const char* data = in + at;  // what this rank passes on
    if (tree.parent >= 0) {
      co_await prims.recv(team.recvFrom(tree.parent), out + at, len);
      data = out + at;
    }
    for (int c = 0; c < tree.childCount; ++c) co_await prims.send(team.sendTo(tree.children[c]), data, len);
    if (tree.parent < 0 && out + at != in + at) prims.copy(out + at, in + at, len * elem);
  }
}

Task<> binomialReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t elem = prims.elementSize();
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  if (team.nranks == 1) {
    prims.localReduceCopy(in, out, args.count);
    co_return;
  }
  const BinomialLinks tree = binomialFor(team, args.root);
  const bool isRoot = tree.parent < 0;
  const size_t chunk = prims.chunkElements(team.slotBytes);
  // Off the root, partial sums of more than one child wait in scratch (a
  // rank's recvbuf need not exist there); the communicator's, as the
  // schedule parks between chunks.
  std::vector<char>& scratch = team.reduceScratch;
  if (tree.childCount >= 2 && !isRoot && scratch.size() < chunk * elem) scratch.resize(chunk * elem);
  for (size_t start = 0; start < args.count; start += chunk) {
    const size_t len = std::min(chunk, args.count - start);
    const size_t at = start * elem;
    const char* partial = in + at;
    // The shallowest subtrees finish first: children from the last.
    for (int c = tree.childCount - 1; c >= 1; --c) {
      char* sum = isRoot ? out + at : scratch.data();
      co_await prims.recvReduce(team.recvFrom(tree.children[c]), partial, sum, len);
      partial = sum;
    }
    if (tree.childCount == 0)
      co_await prims.send(team.sendTo(tree.parent), partial, len);
    else if (isRoot)
      co_await prims.recvReduceCopy(team.recvFrom(tree.children[0]), partial, out + at, len);
    else
      co_await prims.recvReduceSend(team.recvFrom(tree.children[0]), team.sendTo(tree.parent), partial, len);
  }
}

}  // namespace loom

// Double binary tree AllReduce, as NCCL runs it across nodes: the buffer's
// two halves each go up one binary tree (reduced on the way) and back down
// it (broadcast), slot by slot so that every level works at once. A
// message crosses 2 log2(P) hops rather than the ring's 2(P-1). The two
// trees are the tree of tree.h over the ring order and the same tree over
// the reversed order, rooted at opposite ends of the ring: a rank that is a
// leaf of one, sending its half once, is mostly inside the other, so the
// sending is spread over both.
//
// Every rank works through the slots in one order (each tree's slot c up,
// for every c, then each tree's slot c down), and within a slot messages
// only follow the tree's edges: whatever a rank waits for, its peer reaches
// without waiting on it, so bounded FIFOs never close a cycle.
#include <algorithm>

#include "collectives/collectives.h"
#include "collectives/primitives.h"
#include "collectives/tree.h"

namespace loom {
namespace {

// One of the two trees as this rank sees it: team indices of its parent
// and children (-1: none), and the stretch of the buffer it carries.
struct HalfTree {
  int parent = -1;
  int children[2] = {-1, -1};
  int childCount = 0;
  size_t offset = 0;  // elements
  size_t count = 0;
};

HalfTree halfTree(const Team& team, bool reversed, size_t offset, size_t count) {
  const int n = team.nranks;
  auto indexOfPosition = [&](int position) { return reversed ? n - 1 - position : position; };
  auto memberAt = [&](int index) { return team.ringRank(indexOfPosition(index)); };  // the map is its own inverse
  const TreeLinks links = treeLinks(n, indexOfPosition(team.ringPosition));
  HalfTree tree;
  if (links.parent >= 0) tree.parent = memberAt(links.parent);
  for (int c = 0; c < links.childCount; ++c) tree.children[c] = memberAt(links.children[c]);
  tree.childCount = links.childCount;
  tree.offset = offset;
  tree.count = count;
  return tree;
}

// Slot `at` (elements from the tree's start, `count` of them) up the tree:
// the children's partial results reduced into this rank's input, passed to
// the parent; at the root, the whole reduction lands in `out`.
Task<> reduceUp(const Team& team, Primitives& prims, const HalfTree& tree, const char* in, char* out, size_t at,
                size_t count) {
  const size_t bytesAt = (tree.offset + at) * prims.elementSize();
  const char* local = in + bytesAt;
  char* result = out + bytesAt;
  for (int c = 0; c < tree.childCount; ++c) {
    RecvConnection& from = team.recvFrom(tree.children[c]);
    if (c == tree.childCount - 1 && tree.parent >= 0) {
      co_await prims.recvReduceSend(from, team.sendTo(tree.parent), local, count);
      co_return;
    }
    co_await prims.recvReduce(from, local, result, count);
    local = result;
  }
  if (tree.parent >= 0) co_await prims.send(team.sendTo(tree.parent), local, count);  // a leaf
}

// The same slot down the tree: the root's result (finished for avg) to
// every rank's `out`.
Task<> broadcastDown(const Team& team, Primitives& prims, const HalfTree& tree, const CollectiveArgs& args, char* out,
                     size_t at, size_t count) {
  char* result = out + (tree.offset + at) * prims.elementSize();
  if (tree.parent < 0) {
    if (args.op == loomAvg) executorFor(args.memory).divide(result, count, args.dtype, team.nranks);
  } else {
    co_await prims.recv(team.recvFrom(tree.parent), result, count);
  }
  for (int c = 0; c < tree.childCount; ++c) co_await prims.send(team.sendTo(tree.children[c]), result, count);
}

}  // namespace

Task<> doubleTreeAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  if (team.nranks == 1) {
    prims.localReduceCopy(in, out, args.count);
    co_return;
  }
  const size_t firstHalf = args.count - args.count / 2;
  const HalfTree trees[2] = {halfTree(team, false, 0, firstHalf),
                             halfTree(team, true, firstHalf, args.count - firstHalf)};
  const size_t chunk = prims.chunkElements(team.slotBytes);
  for (size_t at = 0; at < firstHalf; at += chunk)
    for (const HalfTree& tree : trees)
      if (at < tree.count) co_await reduceUp(team, prims, tree, in, out, at, std::min(chunk, tree.count - at));
  for (size_t at = 0; at < firstHalf; at += chunk)
    for (const HalfTree& tree : trees)
      if (at < tree.count) co_await broadcastDown(team, prims, tree, args, out, at, std::min(chunk, tree.count - at));
}

}  // namespace loom

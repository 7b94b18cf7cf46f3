// Broadcast and Reduce along the binary tree of tree.h, pipelined by chunks:
// for small messages the tree's log2(n) hops beat the chain's n-1.
#include <algorithm>
#include <vector>

#include "collectives/collectives.h"
#include "collectives/primitives.h"
#include "collectives/tree.h"

namespace loom {
namespace {

// This rank's tree for `root`: treeLinks with ranks in place of indices.
TreeLinks treeFor(const Team& team, int root) {
  const int rootPosition = team.positionOf(root);
  TreeLinks tree = treeLinks(team.nranks, team.hopsFrom(root));
  if (tree.parent >= 0) tree.parent = team.ringRank(rootPosition + tree.parent);
  for (int c = 0; c < tree.childCount; ++c) tree.children[c] = team.ringRank(rootPosition + tree.children[c]);
  return tree;
}

}  // namespace

Task<> treeBroadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t elem = prims.elementSize();
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  if (team.nranks == 1) {
    prims.copy(out, in, args.count * elem);
    co_return;
  }
  const TreeLinks tree = treeFor(team, args.root);
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
    if (tree.parent < 0) prims.copy(out + at, in + at, len * elem);
  }
}

Task<> treeReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t elem = prims.elementSize();
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  if (team.nranks == 1) {
    prims.localReduceCopy(in, out, args.count);
    co_return;
  }
  const TreeLinks tree = treeFor(team, args.root);
  const bool isRoot = tree.parent < 0;
  const size_t chunk = prims.chunkElements(team.slotBytes);
  // A rank with two children combines its input with the first child's in
  // scratch (its recvbuf need not exist off the root), then the second's.
  // The communicator's, not the thread's: the schedule parks between chunks,
  // and the thread may meanwhile drive another communicator's tree.
  std::vector<char>& scratch = team.reduceScratch;
  if (tree.childCount == 2 && !isRoot && scratch.size() < chunk * elem) scratch.resize(chunk * elem);
  for (size_t start = 0; start < args.count; start += chunk) {
    const size_t len = std::min(chunk, args.count - start);
    const size_t at = start * elem;
    const char* partial = in + at;
    if (tree.childCount == 2) {
      char* sum = isRoot ? out + at : scratch.data();
      co_await prims.recvReduce(team.recvFrom(tree.children[0]), partial, sum, len);
      partial = sum;
    }
    if (tree.childCount == 0) {
      co_await prims.send(team.sendTo(tree.parent), partial, len);
      continue;
    }
    RecvConnection& last = team.recvFrom(tree.children[tree.childCount - 1]);
    if (isRoot)
      co_await prims.recvReduceCopy(last, partial, out + at, len);
    else
      co_await prims.recvReduceSend(last, team.sendTo(tree.parent), partial, len);
  }
}

}  // namespace loom

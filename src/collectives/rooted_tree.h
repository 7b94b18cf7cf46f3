// Broadcast and Reduce along a tree rooted at the collective's root, by
// chunks of a slot, for any tree shape over the ring order whose links
// give a parent (-1 at the root) and children (tree.h's binary tree,
// binomial.h's binomial tree). Children come largest subtree first: a
// Broadcast sends to them in that order, a Reduce takes them in the
// reverse (the shallowest subtree finishes first).
#pragma once

#include <algorithm>
#include <vector>

#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {

// `links` (indices of the order rotated to put the root at 0) with ranks in
// their place.
template <typename Links>
Links rankLinks(const Team& team, int root, Links links) {
  const int rootPosition = team.positionOf(root);
  if (links.parent >= 0) links.parent = team.ringRank(rootPosition + links.parent);
  for (int c = 0; c < links.childCount; ++c) links.children[c] = team.ringRank(rootPosition + links.children[c]);
  return links;
}

template <typename Links>
Task<> broadcastAlong(const Team& team, const CollectiveArgs& args, const WaitContext& wait, Links tree) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t elem = prims.elementSize();
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
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
    if (tree.parent < 0 && out != in) prims.copy(out + at, in + at, len * elem);
  }
}

template <typename Links>
Task<> reduceAlong(const Team& team, const CollectiveArgs& args, const WaitContext& wait, Links tree) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t elem = prims.elementSize();
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  if (team.nranks == 1) {
    prims.localReduceCopy(in, out, args.count);
    co_return;
  }
  const bool isRoot = tree.parent < 0;
  const size_t chunk = prims.chunkElements(team.slotBytes);
  // Off the root, partial sums of more than one child wait in scratch (a
  // rank's recvbuf need not exist there). The communicator's, not the
  // thread's: the schedule parks between chunks, and the thread may
  // meanwhile drive another communicator's tree.
  std::vector<char>& scratch = team.reduceScratch;
  if (tree.childCount >= 2 && !isRoot && scratch.size() < chunk * elem) scratch.resize(chunk * elem);
  for (size_t start = 0; start < args.count; start += chunk) {
    const size_t len = std::min(chunk, args.count - start);
    const size_t at = start * elem;
    const char* partial = in + at;
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

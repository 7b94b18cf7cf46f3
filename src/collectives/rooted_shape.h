// What the cost model needs to know of a rooted schedule (Broadcast and
// Reduce along the chain, tree.h's binary tree or binomial.h's binomial
// tree): how long its paths from the root are, and how much its busiest
// rank, and every rank on average, copies.
//
// A Broadcast's chunk reaches a rank after every hop of its path (a
// latency, and the chunk copied out of the parent's slot) and every send
// the path waits through (the chunk copied into a slot), a parent's sends
// to its earlier children included. Which path takes longest depends on
// the latency against the copy, so the shape keeps every path that could:
// those no other path beats in both hops and sends. A Reduce runs the
// paths backwards, taking the deepest child last, so each hop is one pass
// (receive, reduce, send on) while the shallower children's wait behind it.
#pragma once

#include <vector>

#include "collectives/algorithm_table.h"

namespace loom {

struct RootedPath {
  int hops = 0;
  int sends = 0;
};

struct RootedShape {
  std::vector<RootedPath> paths;  // most hops first; a handful, at most (log2 n)^2
  // Per chunk of the call, the most passes over a chunk one rank makes;
  // once the pipeline fills, every further chunk waits on them. Broadcast:
  // the chunk in (off the root: out of its parent's slot; at the root:
  // input to output) and one out per child. Reduce: one per child, the
  // last of which also sends the sum on (recvReduceSend), one at a leaf.
  int busiestBroadcastPasses = 0;
  int busiestReducePasses = 0;
  // The same passes summed over every rank and divided by the ranks: where
  // ranks share CPUs, each chunk waits on all of them in turn.
  double meanBroadcastPasses = 0;
  double meanReducePasses = 0;
};

// kRing (the chain), kTree or kBinomial on n ranks; empty for the others.
// O(n log n), remembered per thread for the last n of each: the reference
// holds until this thread asks for the same tree on another n.
const RootedShape& rootedShape(TunedAlgorithm algorithm, int n);

}  // namespace loom

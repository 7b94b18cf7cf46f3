// What the cost model needs to know of a rooted schedule (Broadcast and
// Reduce along the chain, tree.h's binary tree or binomial.h's binomial
// tree): how long its paths from the root are, and how much its busiest
// rank copies.
//
// A chunk reaches a rank after every hop of its path (a latency, and the
// chunk copied out of the parent's slot) and every send the path waits
// through (the chunk copied into a slot), a parent's sends to its earlier
// children included. Which path takes longest depends on the latency
// against the copy, so the shape keeps every path that could: those no
// other path beats in both hops and sends.
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
  // Per chunk of the call, the most chunks one rank copies: its own in
  // (off the root) and one out per child. Once the pipeline fills, every
  // further chunk waits on it.
  int busiestCopies = 0;
};

// kRing (the chain), kTree or kBinomial on n ranks; empty for the others.
// O(n log n), remembered per thread for the last n of each.
RootedShape rootedShape(TunedAlgorithm algorithm, int n);

}  // namespace loom

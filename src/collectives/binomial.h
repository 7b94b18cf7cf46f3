// The shape of the binomial tree (Broadcast and Reduce in the fewest
// rounds): over the ring order rotated to put the root at 0, node v's parent
// is v without its lowest set bit, and its children are v + 2^k for every
// 2^k below that bit (at the root, below n). Every subtree is a contiguous
// stretch of the ring, as the binary tree's (tree.h), so it crosses sockets
// and hosts no more often than the ring does. A Broadcast reaches every rank
// in ceil(log2 n) rounds, each rank that has the data passing it on once a
// round; the binary tree sends two messages a node, a chain takes n - 1.
#pragma once

namespace loom {

struct BinomialLinks {
  int parent = -1;  // -1 at the root
  // Children by subtree size, largest first: a Broadcast sends to the
  // deepest subtree first, a Reduce takes the shallowest first.
  int children[32] = {};
  int childCount = 0;
};

// Links of the node at `index` (0 = root) in a tree of n nodes; O(log n).
inline BinomialLinks binomialLinks(int n, int index) {
  BinomialLinks links;
  int lowest = 1;  // index's lowest set bit; at the root, the least power of two from n
  if (index == 0) {
    while (lowest < n) lowest <<= 1;
  } else {
    lowest = index & -index;
    links.parent = index - lowest;
  }
  for (int step = lowest >> 1; step >= 1; step >>= 1)
    if (index + step < n) links.children[links.childCount++] = index + step;
  return links;
}

}  // namespace loom

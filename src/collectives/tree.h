// The shape of Loom's binary tree (one of the Broadcast and Reduce trees): a
// binary tree over the ring order, rooted at the collective's root. Node i
// of the rotated order (the root is 0) owns the stretch [i, end) of it; its
// first child takes the first half of the rest, its second child the other
// half. Every subtree is then a contiguous stretch of the ring, so the tree
// crosses sockets and NUMA nodes no more often than the ring does, and its
// depth is floor(log2(n)): a message needs that many hops instead of the
// chain's n-1, and each hop costs a wake-up when ranks outnumber cores.
#pragma once

namespace loom {

// Indices in the rotated order (algorithms map them to ranks).
struct TreeLinks {
  int parent = -1;  // -1 at the root
  int children[2] = {-1, -1};
  int childCount = 0;
};

// Links of the node at `index` (0 = root) in a tree of n nodes. O(log n), no
// allocation: called for every small Broadcast and Reduce.
inline TreeLinks treeLinks(int n, int index) {
  TreeLinks links;
  int node = 0, end = n;
  while (node != index) {  // walk down from the root to the stretch holding index
    const int rest = end - node - 1;
    const int split = node + 1 + (rest + 1) / 2;  // first child's stretch: [node + 1, split)
    links.parent = node;
    if (index < split) {
      end = split;
      node = node + 1;
    } else {
      node = split;
    }
  }
  const int rest = end - node - 1;
  if (rest >= 1) links.children[links.childCount++] = node + 1;
  if (rest >= 2) links.children[links.childCount++] = node + 1 + (rest + 1) / 2;
  return links;
}

}  // namespace loom

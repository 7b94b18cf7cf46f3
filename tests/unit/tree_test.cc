// The tree shape of src/collectives/tree.h, checked for every size up to 70
// against what a tree must be: one root, each other node with one parent
// that lists it as a child, every node reachable, depth floor(log2(n)) (the least a binary tree
// allows), and
// every subtree a contiguous stretch of the ring order.
#include "collectives/tree.h"

#include <gtest/gtest.h>

#include <vector>

#include "collectives/binomial.h"

namespace loom {
namespace {

// A binary tree of depth d holds at most 2^(d+1) - 1 nodes.
int floorLog2(int n) {
  int depth = 0;
  while ((2 << depth) <= n) ++depth;
  return depth;
}

TEST(TreeLinks, IsABinaryTreeOfContiguousSubtreesAndLogDepth) {
  for (int n = 1; n <= 70; ++n) {
    std::vector<TreeLinks> links;
    for (int i = 0; i < n; ++i) links.push_back(treeLinks(n, i));
    EXPECT_EQ(links[0].parent, -1) << "n " << n;
    for (int i = 1; i < n; ++i) {
      ASSERT_GE(links[i].parent, 0) << "n " << n << " node " << i;
      ASSERT_LT(links[i].parent, i) << "parents come before children in ring order";
      const TreeLinks& p = links[links[i].parent];
      int listed = 0;
      for (int c = 0; c < p.childCount; ++c) listed += p.children[c] == i;
      EXPECT_EQ(listed, 1) << "n " << n << ": node " << i << " not a child of its parent";
    }
    // Subtree sizes by walking children; each subtree must be [i, i + size).
    std::vector<int> size(n, 1), depth(n, 0);
    for (int i = n - 1; i >= 0; --i)
      for (int c = 0; c < links[i].childCount; ++c) size[i] += size[links[i].children[c]];
    EXPECT_EQ(size[0], n) << "every node reachable from the root";
    int deepest = 0;
    for (int i = 1; i < n; ++i) {
      depth[i] = depth[links[i].parent] + 1;
      deepest = std::max(deepest, depth[i]);
    }
    EXPECT_EQ(deepest, floorLog2(n)) << "n " << n;
    for (int i = 0; i < n; ++i) {
      int next = i + 1;
      for (int c = 0; c < links[i].childCount; ++c) {
        EXPECT_EQ(links[i].children[c], next) << "n " << n << ": subtree of " << i << " is not contiguous";
        next += size[links[i].children[c]];
      }
      EXPECT_EQ(next, i + size[i]);
    }
  }
}

TEST(TreeLinks, EightNodesAsDocumented) {
  // 0 -> 1 5; 1 -> 2 4; 2 -> 3; 5 -> 6 7
  EXPECT_EQ(treeLinks(8, 0).children[0], 1);
  EXPECT_EQ(treeLinks(8, 0).children[1], 5);
  EXPECT_EQ(treeLinks(8, 1).children[1], 4);
  EXPECT_EQ(treeLinks(8, 3).parent, 2);
  EXPECT_EQ(treeLinks(8, 7).parent, 5);
  EXPECT_EQ(treeLinks(8, 7).childCount, 0);
}

int ceilLog2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

// The binomial tree of binomial.h, up to 300 nodes: one root, parents that
// list their children once, every node reached, children by subtree size
// (largest first), and a Broadcast that reaches every node in ceil(log2 n)
// rounds when each node sends one message a round, in its children's order.
TEST(BinomialLinks, ReachesEveryNodeInCeilLog2Rounds) {
  for (int n = 1; n <= 300; ++n) {
    std::vector<BinomialLinks> links;
    for (int i = 0; i < n; ++i) links.push_back(binomialLinks(n, i));
    EXPECT_EQ(links[0].parent, -1);
    std::vector<int> round(n, -1);  // when each node has the data
    round[0] = 0;
    for (int i = 0; i < n; ++i) {
      ASSERT_GE(round[i], 0) << "n " << n << ": node " << i << " reached after a node above it";
      for (int c = 0; c < links[i].childCount; ++c) {
        const int child = links[i].children[c];
        ASSERT_GT(child, i);
        ASSERT_LT(child, n);
        EXPECT_EQ(links[child].parent, i) << "n " << n << " child " << child;
        EXPECT_EQ(round[child], -1) << "n " << n << ": node " << child << " listed twice";
        round[child] = round[i] + c + 1;
        if (c > 0) {
          EXPECT_GT(links[i].children[c - 1], child) << "largest subtree first";
        }
      }
    }
    int last = 0;
    for (int i = 0; i < n; ++i) {
      ASSERT_GE(round[i], 0) << "n " << n << ": node " << i << " unreached";
      last = std::max(last, round[i]);
    }
    EXPECT_EQ(last, ceilLog2(n)) << "n " << n;
  }
}

TEST(BinomialLinks, EightNodesAsDocumented) {
  // 0 -> 4 2 1; 2 -> 3; 4 -> 6 5; 6 -> 7
  const BinomialLinks root = binomialLinks(8, 0);
  ASSERT_EQ(root.childCount, 3);
  EXPECT_EQ(root.children[0], 4);
  EXPECT_EQ(root.children[2], 1);
  EXPECT_EQ(binomialLinks(8, 6).parent, 4);
  EXPECT_EQ(binomialLinks(8, 6).children[0], 7);
  EXPECT_EQ(binomialLinks(8, 5).parent, 4);
  EXPECT_EQ(binomialLinks(8, 1).childCount, 0);
}

}  // namespace
}  // namespace loom

#include "collectives/rooted_shape.h"

#include <algorithm>

#include "collectives/binomial.h"
#include "collectives/tree.h"

namespace loom {
namespace {

// Walks the tree from the root, children in the order their parent sends
// to them.
template <typename LinksOf>
RootedShape walk(int n, LinksOf linksOf) {
  std::vector<RootedPath> at(static_cast<size_t>(n));
  std::vector<int> order{0};  // the ranks reached, parents before children
  RootedShape shape;
  for (size_t i = 0; i < order.size(); ++i) {
    const int v = order[i];
    const auto links = linksOf(n, v);
    shape.busiestBroadcastPasses = std::max(shape.busiestBroadcastPasses, 1 + links.childCount);
    shape.busiestReducePasses = std::max(shape.busiestReducePasses, std::max(1, links.childCount));
    shape.meanBroadcastPasses += 1.0 + links.childCount;
    shape.meanReducePasses += std::max(1, links.childCount);
    for (int c = 0; c < links.childCount; ++c) {
      const int child = links.children[c];
      at[static_cast<size_t>(child)] = {at[static_cast<size_t>(v)].hops + 1, at[static_cast<size_t>(v)].sends + c + 1};
      order.push_back(child);
    }
  }
  shape.meanBroadcastPasses /= n;
  shape.meanReducePasses /= n;
  // Most hops first; of those, keep each that sends more than every path
  // with more hops.
  std::sort(at.begin(), at.end(), [](const RootedPath& a, const RootedPath& b) {
    return a.hops != b.hops ? a.hops > b.hops : a.sends > b.sends;
  });
  int mostSends = -1;
  for (const RootedPath& path : at) {
    if (path.hops == 0 || path.sends <= mostSends) continue;
    shape.paths.push_back(path);
    mostSends = path.sends;
  }
  return shape;
}

struct ChainLinks {
  int children[1] = {};
  int childCount = 0;
};

ChainLinks chainLinks(int n, int index) {
  ChainLinks links;
  if (index + 1 < n) links.children[links.childCount++] = index + 1;
  return links;
}

}  // namespace

const RootedShape& rootedShape(TunedAlgorithm algorithm, int n) {
  static const RootedShape kNone;
  struct Remembered {
    int n = -1;
    RootedShape shape;
  };
  thread_local Remembered chain, binary, binomial;
  Remembered* remembered = algorithm == TunedAlgorithm::kRing       ? &chain
                           : algorithm == TunedAlgorithm::kTree     ? &binary
                           : algorithm == TunedAlgorithm::kBinomial ? &binomial
                                                                    : nullptr;
  if (remembered == nullptr || n < 1) return kNone;
  if (remembered->n != n) {
    remembered->shape = algorithm == TunedAlgorithm::kRing   ? walk(n, chainLinks)
                        : algorithm == TunedAlgorithm::kTree ? walk(n, treeLinks)
                                                             : walk(n, binomialLinks);
    remembered->n = n;
  }
  return remembered->shape;
}

}  // namespace loom

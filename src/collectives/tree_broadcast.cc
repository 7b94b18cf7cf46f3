// Broadcast and Reduce along the binary tree of tree.h, pipelined by chunks:
// for small messages the tree's log2(n) hops beat the chain's n-1.
#include "collectives/rooted_tree.h"
#include "collectives/tree.h"

namespace loom {

Task<> treeBroadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  return broadcastAlong(team, args, wait, rankLinks(team, args.root, treeLinks(team.nranks, team.hopsFrom(args.root))));
}

Task<> treeReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  return reduceAlong(team, args, wait, rankLinks(team, args.root, treeLinks(team.nranks, team.hopsFrom(args.root))));
}

}  // namespace loom

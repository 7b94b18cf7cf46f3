// Broadcast and Reduce along the binomial tree of binomial.h: ceil(log2 n)
// rounds, one message a rank a round, each host boundary crossed once.
#include "collectives/binomial.h"
#include "collectives/rooted_tree.h"

namespace loom {

Task<> binomialBroadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  return broadcastAlong(team, args, wait,
                        rankLinks(team, args.root, binomialLinks(team.nranks, team.hopsFrom(args.root))));
}

Task<> binomialReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  return reduceAlong(team, args, wait,
                     rankLinks(team, args.root, binomialLinks(team.nranks, team.hopsFrom(args.root))));
}

}  // namespace loom

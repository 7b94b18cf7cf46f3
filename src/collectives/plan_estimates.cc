// The cost model's estimates of every row plan.h weighs. The flat schedules
// come straight from cost_model.h; the schedules through host leaders and
// in steps (hierarchical.h) are sums of the flat schedules they are made
// of: over shared memory on the fullest host, and across hosts among one
// rank per host, as many such teams at once as the schedule has lanes.
#include <algorithm>
#include <cmath>

#include "collectives/plan.h"
#include "collectives/team.h"

namespace loom {
namespace {

TeamShape fullestHost(const PlanInputs& in) {
  return {in.shape.mostRanksOnAHost, 1, in.shape.mostRanksOnAHost};
}

int lanesOf(const PlanInputs& in) {
  return in.fewestRanksOnAHost > 0 ? in.fewestRanksOnAHost : in.shape.mostRanksOnAHost;
}

// The step across hosts as it runs (cheapestAcrossHosts), with `lanes`
// such steps at once.
double cheapestAcrossUs(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, int lanes,
                        size_t bytes) {
  const PlanInputs across = acrossHostsInputs(in, in.shape.hosts, lanes);
  return estimateUs(collective, cheapestAcrossHosts(collective, across, tuning, bytes), across.shape, bytes,
                    tuning.costs);
}

// A host's ranks each hand a leader `bytes` (or the leader hands each of
// them `bytes`): one step over shared memory, a further message per
// further member, and the leader's copies in or out.
double fanUs(const PlanInputs& in, const CostConstants& costs, size_t bytes) {
  const int members = in.shape.mostRanksOnAHost;
  if (members < 2) return 0;
  const LinkCosts& link = costs.sharedMemory;
  return link.latencyUs + (members - 2) * link.messageUs + (members - 1) * static_cast<double>(bytes) / link.bytesPerUs;
}

// leaderAllReduce and leaderAllGather (hierarchical.cc).
double throughLeadersUs(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  const CostConstants& costs = tuning.costs;
  if (collective == TunedCollective::kAllReduce)
    return fanUs(in, costs, bytes) + cheapestAcrossUs(collective, in, tuning, 1, bytes) + fanUs(in, costs, bytes);
  // AllGather: blocks up, the leaders' packed hosts in one all-pairs swap, the whole result down.
  const int hosts = in.shape.hosts;
  const double block = static_cast<double>(bytes) / in.shape.nranks;
  const LinkCosts& network = costs.network;
  const double swapUs = network.latencyUs + (hosts - 2) * network.messageUs +
                        (hosts - 1) * in.shape.mostRanksOnAHost * block / network.bytesPerUs;
  return fanUs(in, costs, static_cast<size_t>(block)) + swapUs + fanUs(in, costs, bytes);
}

// hierarchicalAllReduce, its two-host pipeline, and hierarchical_blocks.cc.
double inStepsUs(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  const CostConstants& costs = tuning.costs;
  const TeamShape host = fullestHost(in);
  const int lanes = lanesOf(in);
  const double n = static_cast<double>(bytes);
  if (collective == TunedCollective::kAllReduce) {
    const double withinUs = estimateUs(TunedCollective::kReduceScatter, TunedAlgorithm::kRing, host, bytes, costs) +
                            estimateUs(TunedCollective::kAllGather, TunedAlgorithm::kRing, host, bytes, costs);
    const size_t block = static_cast<size_t>(std::ceil(n / lanes));
    const double acrossUs = cheapestAcrossUs(collective, in, tuning, lanes, block);
    // Two hosts: segment by segment, the steps within hosts overlap the
    // step across them, as a two-stage pipeline of k segments.
    if (in.shape.hosts == 2 && in.twoHostSegmentBytes > 0 && block > in.twoHostSegmentBytes) {
      const double k = std::ceil(static_cast<double>(block) / in.twoHostSegmentBytes);
      return (withinUs + acrossUs) / k + (k - 1) / k * std::max(withinUs, acrossUs);
    }
    return withinUs + acrossUs;
  }
  // AllGather and ReduceScatter: rounds across hosts (a round per local
  // index every host has), and within each host a ring per host's blocks
  // and round, which together move the whole buffer.
  const int rounds = (in.shape.mostRanksOnAHost + lanes - 1) / lanes;
  const double withinUs = estimateUs(collective, TunedAlgorithm::kRing, host, bytes, costs) +
                          (in.shape.hosts * rounds - 1) * estimateUs(collective, TunedAlgorithm::kRing, host, 0, costs);
  const size_t laneBytes = static_cast<size_t>(n * in.shape.hosts / in.shape.nranks);  // a block per host
  // Even hosts: one round, in the cheapest flat schedule across.
  if (rounds == 1) return cheapestAcrossUs(collective, in, tuning, lanes, laneBytes) + withinUs;
  // Uneven: rings.
  // Every round takes the ring's steps; the fullest host's link carries a
  // block of each of its ranks to each further host: as one ring's whose
  // result holds that host's ranks' blocks from every host.
  const TeamShape across{in.shape.hosts, in.shape.hosts, 1, 1};
  const double stepsUs =
      estimateUs(collective, TunedAlgorithm::kRing, TeamShape{in.shape.hosts, in.shape.hosts, 1, lanes}, 0, costs);
  const size_t carried = static_cast<size_t>(n * in.shape.mostRanksOnAHost * in.shape.hosts / in.shape.nranks);
  const double carriedUs = estimateUs(collective, TunedAlgorithm::kRing, across, carried, costs) -
                           estimateUs(collective, TunedAlgorithm::kRing, across, 0, costs);
  return rounds * stepsUs + carriedUs + withinUs;
}

}  // namespace

double planEstimateUs(TunedCollective collective, TunedAlgorithm algorithm, const PlanInputs& in, const Tuning& tuning,
                      size_t bytes) {
  switch (algorithm) {
    case TunedAlgorithm::kHostLeaders: return throughLeadersUs(collective, in, tuning, bytes);
    case TunedAlgorithm::kHierarchical: return inStepsUs(collective, in, tuning, bytes);
    default: return estimateUs(collective, algorithm, in.shape, bytes, tuning.costs);
  }
}

}  // namespace loom

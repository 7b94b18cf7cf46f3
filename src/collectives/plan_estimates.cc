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
  return {in.shape.mostRanksOnAHost, 1, in.shape.mostRanksOnAHost, 1, in.shape.ranksPerCpu, in.shape.sockets,
          in.shape.fewestCpusOnAHost};
}

// A composition's step across hosts as it runs: `lanes` teams of one rank
// per host at once, each moving `bytes` in `schedule`.
struct AcrossStep {
  TunedAlgorithm schedule = TunedAlgorithm::kRing;
  int lanes = 1;
  size_t bytes = 0;
};

int roundsOf(const PlanInputs& in) {
  const int lanes = fewestRanksOnAHost(in);
  return (in.shape.mostRanksOnAHost + lanes - 1) / lanes;
}

AcrossStep acrossStepOf(TunedCollective collective, TunedAlgorithm algorithm, const PlanInputs& in,
                        const Tuning& tuning, size_t bytes) {
  AcrossStep step;
  if (algorithm == TunedAlgorithm::kHostLeaders) {
    step.bytes = bytes;
    // AllGather's leaders swap their hosts' blocks in one all-pairs step.
    if (collective == TunedCollective::kAllGather) {
      step.schedule = TunedAlgorithm::kAllPairs;
      return step;
    }
  } else if (collective == TunedCollective::kAllReduce) {
    step.lanes = fewestRanksOnAHost(in);
    step.bytes = static_cast<size_t>(std::ceil(static_cast<double>(bytes) / step.lanes));  // a lane's block
    // Two hosts, several segments: each lane swaps a segment with its peer
    // and combines (hierarchical_pipeline.h).
    if (in.shape.hosts == 2 && in.twoHostSegmentBytes > 0 && step.bytes > in.twoHostSegmentBytes) {
      step.schedule = TunedAlgorithm::kAllPairs;
      return step;
    }
  } else {
    step.lanes = fewestRanksOnAHost(in);
    step.bytes =
        static_cast<size_t>(static_cast<double>(bytes) * in.shape.hosts / in.shape.nranks);  // a block per host
    if (roundsOf(in) != 1) return step;  // uneven hosts: rings, in rounds
  }
  step.schedule =
      cheapestAcrossHosts(collective, acrossHostsInputs(in, in.shape.hosts, step.lanes), tuning, step.bytes);
  return step;
}

double acrossUs(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, const AcrossStep& step) {
  return estimateUs(collective, step.schedule, acrossHostsInputs(in, in.shape.hosts, step.lanes).shape, step.bytes,
                    tuning.costs);
}

// A host's ranks each hand a leader `bytes` (or the leader hands each of
// them `bytes`): one step over shared memory, a further message per
// further member, and the copies. The leader passes over each member's
// `bytes` in turn while the members wait, so its passes run alone; the
// members' own copies (into their slots, or out of them) run at once,
// and where ranks share CPUs, in turns as the flat schedules' (cost_model.h).
double fanUs(const PlanInputs& in, const CostConstants& costs, size_t bytes) {
  const int members = in.shape.mostRanksOnAHost;
  if (members < 2) return 0;
  const LinkCosts& link = costs.sharedMemory;
  const double turns = std::max(1.0, in.shape.ranksPerCpu);
  return link.latencyUs + (turns - 1) * costs.switchUs + turns * (members - 2) * link.messageUs +
         (members - 1 + turns) * static_cast<double>(bytes) / link.bytesPerUs;
}

// leaderAllReduce and leaderAllGather (hierarchical.cc).
double throughLeadersUs(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  const CostConstants& costs = tuning.costs;
  if (collective == TunedCollective::kAllReduce)
    return fanUs(in, costs, bytes) +
           acrossUs(collective, in, tuning, acrossStepOf(collective, TunedAlgorithm::kHostLeaders, in, tuning, bytes)) +
           fanUs(in, costs, bytes);
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
  const int lanes = fewestRanksOnAHost(in);
  const double n = static_cast<double>(bytes);
  const AcrossStep step = acrossStepOf(collective, TunedAlgorithm::kHierarchical, in, tuning, bytes);
  if (collective == TunedCollective::kAllReduce) {
    const double withinUs = estimateUs(TunedCollective::kReduceScatter, TunedAlgorithm::kRing, host, bytes, costs) +
                            estimateUs(TunedCollective::kAllGather, TunedAlgorithm::kRing, host, bytes, costs);
    const double betweenUs = acrossUs(collective, in, tuning, step);
    // Two hosts: segment by segment, the steps within hosts overlap the
    // step across them, as a two-stage pipeline of k segments.
    if (in.shape.hosts == 2 && in.twoHostSegmentBytes > 0 && step.bytes > in.twoHostSegmentBytes) {
      const double k = std::ceil(static_cast<double>(step.bytes) / in.twoHostSegmentBytes);
      return (withinUs + betweenUs) / k + (k - 1) / k * std::max(withinUs, betweenUs);
    }
    return withinUs + betweenUs;
  }
  // AllGather and ReduceScatter: rounds across hosts (a round per local
  // index every host has), and within each host a ring per host's blocks
  // and round, which together move the whole buffer.
  const int rounds = roundsOf(in);
  const double withinUs = estimateUs(collective, TunedAlgorithm::kRing, host, bytes, costs) +
                          (in.shape.hosts * rounds - 1) * estimateUs(collective, TunedAlgorithm::kRing, host, 0, costs);
  // Even hosts: one round, in the cheapest flat schedule across.
  if (rounds == 1) return acrossUs(collective, in, tuning, step) + withinUs;
  // Uneven: rings.
  // Every round takes the ring's steps; the fullest host's link carries a
  // block of each of its ranks to each further host: as one ring's whose
  // result holds that host's ranks' blocks from every host.
  const TeamShape across = acrossHostsInputs(in, in.shape.hosts, 1).shape;
  const double stepsUs =
      estimateUs(collective, TunedAlgorithm::kRing, acrossHostsInputs(in, in.shape.hosts, lanes).shape, 0, costs);
  const size_t carried = static_cast<size_t>(n * in.shape.mostRanksOnAHost * in.shape.hosts / in.shape.nranks);
  const double carriedUs = estimateUs(collective, TunedAlgorithm::kRing, across, carried, costs) -
                           estimateUs(collective, TunedAlgorithm::kRing, across, 0, costs);
  return rounds * stepsUs + carriedUs + withinUs;
}

}  // namespace

TunedAlgorithm stepAcrossHosts(TunedCollective collective, TunedAlgorithm algorithm, const PlanInputs& in,
                               const Tuning& tuning, size_t bytes) {
  if (algorithm != TunedAlgorithm::kHostLeaders && algorithm != TunedAlgorithm::kHierarchical)
    return TunedAlgorithm::kCount;
  return acrossStepOf(collective, algorithm, in, tuning, bytes).schedule;
}

double planEstimateUs(TunedCollective collective, TunedAlgorithm algorithm, const PlanInputs& in, const Tuning& tuning,
                      size_t bytes) {
  switch (algorithm) {
    case TunedAlgorithm::kHostLeaders: return throughLeadersUs(collective, in, tuning, bytes);
    case TunedAlgorithm::kHierarchical: return inStepsUs(collective, in, tuning, bytes);
    default: return estimateUs(collective, algorithm, in.shape, bytes, tuning.costs, in.slotBytes);
  }
}

}  // namespace loom

// Which algorithm a collective call takes: a pure function of the team's
// shape, the tuning (LOOM_ALGO, the size limits, the cost constants) and
// the call's size, so that every rank decides alike, and so that
// `loom-topo --plan` prints the very decisions select.cc makes on a team
// it only describes.
//
// The order of the rules:
// 1. an algorithm LOOM_ALGO leaves a collective alone runs at every size;
// 2. the cost model (cost_model.h) estimates every row that applies and
//    LOOM_ALGO allows: the ring, the logarithmic schedules, AllReduce's
//    all-pairs step (up to LOOM_ALLPAIRS_MAX_BYTES, within a slot); on
//    several hosts where some host has several ranks, and no transport
//    reads every peer's memory, the host leaders (small calls, within a
//    slot) and the steps within and across hosts (hierarchical.h;
//    AllGather and ReduceScatter on hosts of even enough sizes,
//    blocksInFewRounds). The compositions are estimated as the flat
//    schedules they are made of (plan_estimates.cc). Broadcast and Reduce
//    weigh the chain along the ring and the binary and binomial trees (up
//    to LOOM_TREE_MAX_BYTES), pipelined by the team's slot; Barrier weighs
//    all-pairs, dissemination and the ring. Where some buffers are
//    registered, or every rank reads every peer's memory (LOOM_CMA=1), the
//    single-copy transfers too (from LOOM_DIRECT_MIN_BYTES when set);
// 3. the least estimate runs.
#pragma once

#include <cstddef>

#include "collectives/cost_model.h"

namespace loom {

struct Team;
struct Tuning;

struct PlanInputs {
  TeamShape shape;
  int fewestRanksOnAHost = 0;      // 0: as many as the most (shape.mostRanksOnAHost)
  bool singleCopy = false;         // every rank reads every peer's memory (direct.h)
  bool registeredWindows = false;  // some buffers are registered (registered.h)
  size_t slotBytes = SIZE_MAX;     // Team::slotBytes
  size_t twoHostSegmentBytes = 0;  // Team::twoHostSegmentBytes
  size_t acrossSlotBytes = 0;      // Team::acrossSlotBytes; 0: as slotBytes
  RankedMemo* memo = nullptr;      // Team::rankedMemo; none for a described team
};

PlanInputs planInputsOf(const Team& team);

// kRegistered runs single copy once the swapped addresses show every
// rank's buffers registered; where they do not, what the model picks
// without registered buffers (select.cc).
TunedAlgorithm planAllReduce(const PlanInputs& in, const Tuning& tuning, size_t bytes);
TunedAlgorithm planAllGather(const PlanInputs& in, const Tuning& tuning, size_t bytes);      // bytes: the result
TunedAlgorithm planReduceScatter(const PlanInputs& in, const Tuning& tuning, size_t bytes);  // bytes: the input
TunedAlgorithm planBroadcastOrReduce(TunedCollective collective, const PlanInputs& in, const Tuning& tuning,
                                     size_t bytes);
TunedAlgorithm planBarrier(const PlanInputs& in, const Tuning& tuning);

// AllGather and ReduceScatter in steps carry a larger host's further ranks'
// blocks in further rounds (hierarchical_blocks.cc), each a ring across
// hosts and within each host: unasked, they run where that takes at most
// two (the largest host at most twice the smallest, as measured on hosts of
// 3 and 2 ranks).
bool blocksInFewRounds(const PlanInputs& in);
// The fewest ranks on a host: the lanes of the steps across hosts.
int fewestRanksOnAHost(const PlanInputs& in);

// Whether single-copy transfers may run a call of `bytes` (rule 2).
bool mayCopyDirect(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, size_t bytes);
bool mayUseRegistered(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, size_t bytes);

// The rows rule 2 weighs for a call of `bytes`: the flat schedules the cost
// model ranks for the collective and LOOM_ALGO allows, the ring first (it
// wins ties); AllReduce's all-pairs step where it fits; the host leaders
// and the steps where they apply.
struct Candidates {
  TunedAlgorithm list[kTunedAlgorithms];
  int count = 0;
  const TunedAlgorithm* begin() const { return list; }
  const TunedAlgorithm* end() const { return list + count; }
};
Candidates weighedAlgorithms(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, size_t bytes);

// The least estimate among weighedAlgorithms (the ring where LOOM_ALGO
// allows none of them).
TunedAlgorithm cheapestRanked(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, size_t bytes);

// The step across hosts of the compositions (hierarchical.h): on `across`
// (one rank per host: shape {H, H, 1, lanes}, `lanes` such teams crossing
// each host's link at once), the flat schedule of `collective` the model
// finds cheapest for `bytes`. Where LOOM_ALGO allows the collective none of
// the flat schedules (it asked for the steps or the leaders, not for a ring
// across hosts) they are weighed as if it were unset. plan_estimates.cc
// estimates the step alike.
TunedAlgorithm cheapestAcrossHosts(TunedCollective collective, const PlanInputs& across, const Tuning& tuning,
                                   size_t bytes);
// `in` (a team's, or a described one) as the step across its hosts sees it.
PlanInputs acrossHostsInputs(const PlanInputs& in, int hosts, int lanes);

// The flat schedule a composition (the host leaders, the steps) runs
// across hosts for a call of `bytes`, as it estimates and runs it; kCount
// for the other rows.
TunedAlgorithm stepAcrossHosts(TunedCollective collective, TunedAlgorithm algorithm, const PlanInputs& in,
                               const Tuning& tuning, size_t bytes);

// The estimated microseconds of one row of weighedAlgorithms on `in`
// (plan_estimates.cc).
double planEstimateUs(TunedCollective collective, TunedAlgorithm algorithm, const PlanInputs& in, const Tuning& tuning,
                      size_t bytes);

}  // namespace loom

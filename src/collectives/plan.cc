#include "collectives/plan.h"

#include <cstdint>

#include "collectives/team.h"
#include "transport/regions.h"

namespace loom {
namespace {

// What LOOM_ALGO leaves one collective.
class Allowed {
 public:
  Allowed(const Tuning& tuning, TunedCollective collective) : filter_(tuning.allowed), collective_(collective) {}
  bool may(TunedAlgorithm algorithm) const { return filter_.allows(collective_, algorithm); }
  bool alone(TunedAlgorithm algorithm) const { return filter_.onlyAllows(collective_, algorithm); }
  // The automatic size limit, or none for an algorithm left alone.
  size_t limit(TunedAlgorithm algorithm, size_t automatic) const { return alone(algorithm) ? SIZE_MAX : automatic; }

 private:
  const AlgorithmFilter& filter_;
  TunedCollective collective_;
};

// One message of `bytes` per link, within a host or across: it must fit
// the team's smallest slot.
bool fitsAllPairs(const PlanInputs& in, size_t bytes, size_t limitBytes) {
  return in.shape.nranks > 1 && bytes <= limitBytes && bytes <= in.slotBytes;
}

bool fitsLeaders(const PlanInputs& in, size_t bytes, size_t limitBytes) {
  return in.shape.hosts >= 2 && in.shape.nranks > in.shape.hosts && fitsAllPairs(in, bytes, limitBytes);
}

// Across hosts: single-copy reads (one transport reaching every peer's
// memory) need neither leaders nor steps, unless LOOM_ALGO leaves those alone.
bool useLeaders(const PlanInputs& in, const Allowed& allowed) {
  return allowed.may(TunedAlgorithm::kHostLeaders) && (allowed.alone(TunedAlgorithm::kHostLeaders) || !in.singleCopy);
}

// The steps run on any layout of several hosts where some host has several
// ranks (hierarchical.h).
bool useHierarchy(TunedCollective collective, const PlanInputs& in, const Allowed& allowed) {
  if (collective != TunedCollective::kAllReduce && collective != TunedCollective::kAllGather &&
      collective != TunedCollective::kReduceScatter)
    return false;
  const bool fits = in.shape.hosts >= 2 && in.shape.nranks > in.shape.hosts;
  if (!allowed.may(TunedAlgorithm::kHierarchical) || !fits) return false;
  if (allowed.alone(TunedAlgorithm::kHierarchical)) return true;
  return !in.singleCopy && (collective == TunedCollective::kAllReduce || blocksInFewRounds(in));
}

// The host leaders where they apply to a call of `bytes`.
bool leadersApply(TunedCollective collective, const PlanInputs& in, const Allowed& allowed, const Tuning& tuning,
                  size_t bytes) {
  if (collective != TunedCollective::kAllReduce && collective != TunedCollective::kAllGather) return false;
  return useLeaders(in, allowed) &&
         fitsLeaders(in, bytes, allowed.limit(TunedAlgorithm::kHostLeaders, tuning.allPairsMaxBytes));
}

bool singleCopyRow(TunedAlgorithm algorithm) {
  return algorithm == TunedAlgorithm::kRegistered || algorithm == TunedAlgorithm::kDirect;
}

}  // namespace

bool mayCopyDirect(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  const Allowed allowed(tuning, collective);
  return allowed.may(TunedAlgorithm::kDirect) && in.shape.nranks > 1 && in.singleCopy &&
         (allowed.alone(TunedAlgorithm::kDirect) || bytes >= tuning.directMinBytes);
}

bool mayUseRegistered(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  const Allowed allowed(tuning, collective);
  return allowed.may(TunedAlgorithm::kRegistered) && in.shape.nranks > 1 && in.registeredWindows &&
         (allowed.alone(TunedAlgorithm::kRegistered) || bytes >= tuning.directMinBytes);
}

Candidates weighedAlgorithms(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  static constexpr TunedAlgorithm kRanked[] = {
      TunedAlgorithm::kRing,          TunedAlgorithm::kTree,       TunedAlgorithm::kHalvingDoubling,
      TunedAlgorithm::kBruck,         TunedAlgorithm::kBinomial,   TunedAlgorithm::kAllPairs,
      TunedAlgorithm::kDissemination, TunedAlgorithm::kRegistered, TunedAlgorithm::kDirect};
  const Allowed allowed(tuning, collective);
  const bool rooted = collective == TunedCollective::kBroadcast || collective == TunedCollective::kReduce;
  Candidates candidates;
  for (TunedAlgorithm algorithm : kRanked) {
    if (!allowed.may(algorithm) || !modelRanks(collective, algorithm)) continue;
    if (algorithm == TunedAlgorithm::kAllPairs &&
        !fitsAllPairs(in, bytes, allowed.limit(algorithm, tuning.allPairsMaxBytes)))
      continue;
    if (rooted && algorithm != TunedAlgorithm::kRing && bytes > allowed.limit(algorithm, tuning.treeMaxBytes)) continue;
    if (algorithm == TunedAlgorithm::kRegistered && !mayUseRegistered(collective, in, tuning, bytes)) continue;
    if (algorithm == TunedAlgorithm::kDirect && !mayCopyDirect(collective, in, tuning, bytes)) continue;
    candidates.list[candidates.count++] = algorithm;
  }
  if (leadersApply(collective, in, allowed, tuning, bytes))
    candidates.list[candidates.count++] = TunedAlgorithm::kHostLeaders;
  if (useHierarchy(collective, in, allowed)) candidates.list[candidates.count++] = TunedAlgorithm::kHierarchical;
  return candidates;
}

TunedAlgorithm cheapestRanked(TunedCollective collective, const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  // One rank has nothing to weigh: every schedule copies its input.
  if (in.shape.nranks == 1) return TunedAlgorithm::kRing;
  const int c = static_cast<int>(collective);
  if (in.memo != nullptr && in.memo->bytes[c] == bytes && in.memo->registered[c] == in.registeredWindows)
    return in.memo->algorithm[c];
  TunedAlgorithm best = TunedAlgorithm::kRing;
  double bestUs = -1;
  for (TunedAlgorithm algorithm : weighedAlgorithms(collective, in, tuning, bytes)) {
    const double us = planEstimateUs(collective, algorithm, in, tuning, bytes);
    if (bestUs < 0 || us < bestUs) {
      best = algorithm;
      bestUs = us;
    }
  }
  if (in.memo != nullptr) {
    in.memo->bytes[c] = bytes;
    in.memo->registered[c] = in.registeredWindows;
    in.memo->algorithm[c] = best;
  }
  return best;
}

TunedAlgorithm cheapestAcrossHosts(TunedCollective collective, const PlanInputs& across, const Tuning& tuning,
                                   size_t bytes) {
  const Allowed allowed(tuning, collective);
  for (int a = 0; a < kTunedAlgorithms; ++a) {
    const TunedAlgorithm flat = static_cast<TunedAlgorithm>(a);
    if (modelRanks(collective, flat) && !singleCopyRow(flat) && allowed.may(flat))
      return cheapestRanked(collective, across, tuning, bytes);
  }
  Tuning unrestricted = tuning;
  unrestricted.allowed = AlgorithmFilter();
  return cheapestRanked(collective, across, unrestricted, bytes);
}

PlanInputs acrossHostsInputs(const PlanInputs& in, int hosts, int lanes) {
  PlanInputs across = in;
  // Each host runs `lanes` of its ranks' steps at once: on the host of
  // fewest CPUs, where known, they take the most turns.
  const int cpus = in.shape.fewestCpusOnAHost;
  const double turns =
      cpus > 0 ? static_cast<double>(lanes) / cpus : in.shape.ranksPerCpu * lanes / in.shape.mostRanksOnAHost;
  across.shape = {hosts, hosts, 1, lanes, turns, 1, cpus};
  across.fewestRanksOnAHost = 1;
  across.twoHostSegmentBytes = 0;
  across.singleCopy = false;  // the lanes' teams run the flat schedules
  across.registeredWindows = false;
  if (in.acrossSlotBytes > 0) across.slotBytes = in.acrossSlotBytes;
  across.acrossSlotBytes = 0;
  across.memo = nullptr;  // another shape than the team's own: weighed afresh
  return across;
}

int fewestRanksOnAHost(const PlanInputs& in) {
  return in.fewestRanksOnAHost > 0 ? in.fewestRanksOnAHost : in.shape.mostRanksOnAHost;
}

bool blocksInFewRounds(const PlanInputs& in) {
  return in.shape.mostRanksOnAHost <= 2 * fewestRanksOnAHost(in);
}

PlanInputs planInputsOf(const Team& team) {
  PlanInputs in;
  in.shape = {team.nranks,      team.hosts,   team.mostRanksOnAHost, 1,
              team.ranksPerCpu, team.sockets, team.fewestCpusOnAHost};
  in.fewestRanksOnAHost = team.fewestRanksOnAHost;
  in.singleCopy = team.peerMemory() != nullptr;
  in.registeredWindows = team.windows != nullptr && team.windows->anyMapped();
  in.slotBytes = team.slotBytes;
  in.twoHostSegmentBytes = team.twoHostSegmentBytes;
  in.acrossSlotBytes = team.acrossSlotBytes;
  in.memo = &team.rankedMemo;
  return in;
}

TunedAlgorithm planAllReduce(const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  const Allowed allowed(tuning, TunedCollective::kAllReduce);
  if (allowed.alone(TunedAlgorithm::kTree)) return TunedAlgorithm::kTree;
  if (allowed.alone(TunedAlgorithm::kHalvingDoubling)) return TunedAlgorithm::kHalvingDoubling;
  return cheapestRanked(TunedCollective::kAllReduce, in, tuning, bytes);
}

TunedAlgorithm planAllGather(const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  const Allowed allowed(tuning, TunedCollective::kAllGather);
  if (allowed.alone(TunedAlgorithm::kBruck)) return TunedAlgorithm::kBruck;
  if (allowed.alone(TunedAlgorithm::kHalvingDoubling)) return TunedAlgorithm::kHalvingDoubling;
  return cheapestRanked(TunedCollective::kAllGather, in, tuning, bytes);
}

TunedAlgorithm planReduceScatter(const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  const Allowed allowed(tuning, TunedCollective::kReduceScatter);
  if (allowed.alone(TunedAlgorithm::kHalvingDoubling)) return TunedAlgorithm::kHalvingDoubling;
  return cheapestRanked(TunedCollective::kReduceScatter, in, tuning, bytes);
}

// Broadcast and Reduce: the model weighs the chain along the ring and both
// trees (the trees up to LOOM_TREE_MAX_BYTES). With two ranks every tree
// is the chain.
TunedAlgorithm planBroadcastOrReduce(TunedCollective collective, const PlanInputs& in, const Tuning& tuning,
                                     size_t bytes) {
  const Allowed allowed(tuning, collective);
  if (in.shape.nranks < 3) return TunedAlgorithm::kRing;
  for (TunedAlgorithm tree : {TunedAlgorithm::kBinomial, TunedAlgorithm::kTree})
    if (allowed.alone(tree)) return tree;
  return cheapestRanked(collective, in, tuning, bytes);
}

TunedAlgorithm planBarrier(const PlanInputs& in, const Tuning& tuning) {
  const Allowed allowed(tuning, TunedCollective::kBarrier);
  for (TunedAlgorithm only : {TunedAlgorithm::kAllPairs, TunedAlgorithm::kDissemination})
    if (allowed.alone(only)) return only;
  return cheapestRanked(TunedCollective::kBarrier, in, tuning, 0);
}

}  // namespace loom

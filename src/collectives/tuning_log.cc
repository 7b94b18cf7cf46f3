#include "collectives/tuning_log.h"

#include <atomic>
#include <cstdio>
#include <string>

#include "base/logging.h"
#include "collectives/plan.h"

namespace loom {
namespace {

// A flag per pair instead of a locked set: the check sits on every call.
std::atomic<bool> logged[kTunedCollectives][kTunedAlgorithms];

// The cost model's estimates for the rows it weighs (plan.h, rule 2).
std::string estimates(const Team& team, const PlanInputs& in, TunedCollective collective, size_t bytes) {
  std::string text = "the least estimate of the cost model among ";
  bool first = true;
  for (TunedAlgorithm algorithm : weighedAlgorithms(collective, in, team.tuning, bytes)) {
    char us[32];
    std::snprintf(us, sizeof(us), "%.1f", planEstimateUs(collective, algorithm, in, team.tuning, bytes));
    text += (first ? "" : ", ") + std::string(algorithmName(algorithm)) + " " + us + " us";
    first = false;
  }
  return text;
}

// What a composition runs across hosts.
std::string acrossHosts(const Team& team, const PlanInputs& in, TunedCollective collective, TunedAlgorithm algorithm,
                        size_t bytes) {
  const TunedAlgorithm across = stepAcrossHosts(collective, algorithm, in, team.tuning, bytes);
  return across == TunedAlgorithm::kCount ? std::string() : "; across hosts: " + std::string(algorithmName(across));
}

// Why the rule picked it, in the terms of the variables a user can change.
std::string automaticReason(const Team& team, const PlanInputs& in, TunedCollective collective,
                            TunedAlgorithm algorithm, size_t bytes) {
  const Tuning& tuning = team.tuning;
  const int nranks = team.nranks;
  const bool rooted = collective == TunedCollective::kBroadcast || collective == TunedCollective::kReduce;
  if (rooted && nranks < 3) return "two ranks: every tree is the chain";
  const std::string treeLimit =
      rooted && tuning.treeMaxBytes != SIZE_MAX
          ? "the trees at most LOOM_TREE_MAX_BYTES=" + std::to_string(tuning.treeMaxBytes) + "; "
          : std::string();
  if (rooted || collective == TunedCollective::kBarrier) return treeLimit + estimates(team, in, collective, bytes);
  switch (algorithm) {
    case TunedAlgorithm::kAllPairs:
      return "at most LOOM_ALLPAIRS_MAX_BYTES=" + std::to_string(tuning.allPairsMaxBytes) + " per rank; " +
             estimates(team, in, collective, bytes);
    case TunedAlgorithm::kRing:
      return (collective == TunedCollective::kAllReduce
                  ? "above LOOM_ALLPAIRS_MAX_BYTES=" + std::to_string(tuning.allPairsMaxBytes) + " per rank; "
                  : std::string()) +
             estimates(team, in, collective, bytes);
    case TunedAlgorithm::kDirect:
      return "LOOM_CMA=1: every rank reads its peers' buffers; " + estimates(team, in, collective, bytes);
    case TunedAlgorithm::kRegistered:
      return "every rank's buffers registered; " + estimates(team, in, collective, bytes);
    case TunedAlgorithm::kTree:
    case TunedAlgorithm::kHalvingDoubling:
    case TunedAlgorithm::kBruck: return estimates(team, in, collective, bytes);
    case TunedAlgorithm::kHierarchical:
      return "ranks on several hosts, some host with more than one, and no single-copy reads: within hosts, "
             "then across them; " +
             estimates(team, in, collective, bytes) + acrossHosts(team, in, collective, algorithm, bytes) +
             "; LOOM_ALGO=^hierarchical keeps the flat schedules";
    case TunedAlgorithm::kHostLeaders:
      if (collective == TunedCollective::kAllGather)
        return "the whole result at most LOOM_ALLPAIRS_MAX_BYTES=" + std::to_string(tuning.allPairsMaxBytes) +
               ", on several hosts: each host's first rank gathers its host's blocks, swaps them with the other "
               "hosts' first ranks and hands the result back; " +
               estimates(team, in, collective, bytes) + "; LOOM_ALGO=^hostleaders keeps the flat schedules";
      return "at most LOOM_ALLPAIRS_MAX_BYTES=" + std::to_string(tuning.allPairsMaxBytes) +
             " per rank, on several hosts: each host's first rank reduces its host's "
             "inputs, all-reduces across hosts and hands the result back; " +
             estimates(team, in, collective, bytes) + acrossHosts(team, in, collective, algorithm, bytes) +
             "; LOOM_ALGO=^hostleaders keeps the flat schedules";
    default: return "";
  }
}

std::string reason(const Team& team, const PlanInputs& in, TunedCollective collective, TunedAlgorithm algorithm,
                   size_t bytes) {
  const AlgorithmFilter& allowed = team.tuning.allowed;
  if (!allowed.restricted(collective)) return automaticReason(team, in, collective, algorithm, bytes);
  if (!allowed.allows(collective, algorithm))
    return "LOOM_ALGO allows nothing that can run this call, so the ring runs it";
  if (allowed.onlyAllows(collective, algorithm)) return "the only one LOOM_ALGO allows";
  return "among those LOOM_ALGO allows: " + automaticReason(team, in, collective, algorithm, bytes);
}

}  // namespace

void noteAlgorithm(const Team& team, const WaitContext& wait, TunedCollective collective, TunedAlgorithm algorithm,
                   size_t bytes, bool unregistered) {
  if (wait.algorithm != nullptr) wait.algorithm->store(algorithmName(algorithm), std::memory_order_relaxed);
  if (static_cast<int>(LogLevel::kInfo) > logLevelCeiling.load(std::memory_order_relaxed) ||
      !logEnabled(LogLevel::kInfo, "TUNING"))
    return;
  std::atomic<bool>& flag = logged[static_cast<int>(collective)][static_cast<int>(algorithm)];
  if (flag.load(std::memory_order_relaxed) || flag.exchange(true)) return;
  PlanInputs in = planInputsOf(team);
  if (unregistered) in.registeredWindows = false;  // as select.cc weighed it
  LOOM_INFO("TUNING", team.rank,
            collectiveName(collective) << " of " << bytes << " bytes on " << team.nranks
                                       << " ranks: " << algorithmName(algorithm) << " ("
                                       << (unregistered ? "some rank's buffers are not registered; " : "")
                                       << reason(team, in, collective, algorithm, bytes)
                                       << "); logged once per algorithm");
}

}  // namespace loom

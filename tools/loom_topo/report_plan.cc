// Which algorithm each collective takes on a simulated launch, at the
// sizes users ask about and wherever the choice changes, with the cost
// model's estimates: collectives/plan.h decides, as select.cc does on
// every call, so what prints here is what runs.
#include <algorithm>
#include <cstdio>

#include "base/error.h"
#include "collectives/hierarchical_pipeline.h"
#include "collectives/plan.h"
#include "collectives/team.h"
#include "core/config.h"
#include "loom_topo/report.h"
#include "transport/identity.h"
#include "transport/registry.h"

namespace loom::topo {
namespace {

constexpr size_t kLargest = size_t{4} << 30;  // the sweep for crossovers ends here

struct Row {
  TunedCollective collective;
  TunedAlgorithm (*plan)(const PlanInputs&, const Tuning&, size_t);
  const char* sizeMeans;
};

TunedAlgorithm planBroadcast(const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  return planBroadcastOrReduce(TunedCollective::kBroadcast, in, tuning, bytes);
}
TunedAlgorithm planReduce(const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  return planBroadcastOrReduce(TunedCollective::kReduce, in, tuning, bytes);
}

TunedAlgorithm planBarrierOf(const PlanInputs& in, const Tuning& tuning, size_t) {
  return planBarrier(in, tuning);
}
const Row kBarrierRow = {TunedCollective::kBarrier, planBarrierOf, "none"};

const Row kRows[] = {
    {TunedCollective::kAllReduce, planAllReduce, "the buffer"},
    {TunedCollective::kAllGather, planAllGather, "the whole result"},
    {TunedCollective::kReduceScatter, planReduceScatter, "the whole input"},
    {TunedCollective::kBroadcast, planBroadcast, "the buffer"},
    {TunedCollective::kReduce, planReduce, "the buffer"},
};

std::string sizeString(size_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  while (unit < 3 && bytes >= 1024 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return std::to_string(bytes) + " " + kUnits[unit];
}

std::string usString(double us) {
  char text[32];
  std::snprintf(text, sizeof(text), us < 10 ? "%.2f" : us < 1000 ? "%.1f" : "%.0f", us);
  return text;
}

// What runs at `bytes`, and the estimates of what the model ranks.
std::string describe(const Row& row, const PlanInputs& in, const Tuning& tuning, size_t bytes) {
  const TunedAlgorithm chosen = row.plan(in, tuning, bytes);
  std::string text = padded(algorithmName(chosen), 17);
  std::string estimates;
  for (TunedAlgorithm algorithm : weighedAlgorithms(row.collective, in, tuning, bytes)) {
    estimates += (estimates.empty() ? "" : ", ") + std::string(algorithmName(algorithm)) + " " +
                 usString(planEstimateUs(row.collective, algorithm, in, tuning, bytes)) + " us";
  }
  if (estimates.empty()) return text;
  text += "(model: " + estimates + ")";
  const TunedAlgorithm across = stepAcrossHosts(row.collective, chosen, in, tuning, bytes);
  if (across != TunedAlgorithm::kCount) text += "; across hosts: " + std::string(algorithmName(across));
  return text;
}

// The smallest size from which `row` takes another algorithm than at `low`,
// searched between `low` and `high` (where they differ).
size_t firstChange(const Row& row, const PlanInputs& in, const Tuning& tuning, size_t low, size_t high) {
  const TunedAlgorithm at = row.plan(in, tuning, low);
  while (high - low > 1) {
    const size_t middle = low + (high - low) / 2;
    if (row.plan(in, tuning, middle) == at)
      low = middle;
    else
      high = middle;
  }
  return high;
}

void printRow(std::ostream& os, const Row& row, const PlanInputs& in, const Tuning& tuning) {
  os << collectiveName(row.collective) << " (size: " << row.sizeMeans << "):\n";
  for (size_t bytes : {size_t{8}, size_t{64} << 10, size_t{1} << 20, size_t{64} << 20})
    os << "  " << padded(sizeString(bytes), 8) << describe(row, in, tuning, bytes) << "\n";
  // Where the choice changes, from 1 byte to 4 GiB: doubling, then bisecting.
  std::string changes;
  TunedAlgorithm current = row.plan(in, tuning, 1);
  changes = algorithmName(current);
  for (size_t low = 1; low < kLargest; low *= 2) {
    const size_t high = low * 2;
    if (row.plan(in, tuning, high) == row.plan(in, tuning, low)) continue;
    // More than one change may hide in one doubling: walk them.
    for (size_t from = low; row.plan(in, tuning, from) != row.plan(in, tuning, high);) {
      from = firstChange(row, in, tuning, from, high);
      current = row.plan(in, tuning, from);
      changes += ", " + std::string(algorithmName(current)) + " from " + std::to_string(from) + " B";
    }
  }
  os << "  choice by size: " << changes << "\n";
}

}  // namespace

SlotShape layoutSlots(const std::vector<int>& ranksPerHost, const std::string& transports) {
  const std::vector<RankIdentity> identities = simulatedIdentities(ranksPerHost);
  const int ranks = static_cast<int>(identities.size());
  const TransportFilter filter = parseTransportFilter(transports, "LOOM_TRANSPORTS");
  const KindSettingsList settings = readKindSettings();
  SlotShape smallest{INT32_MAX, SIZE_MAX};
  // The first and the last rank meet every kind the layout uses.
  for (int r = 0; r < ranks; r += std::max(1, ranks - 1)) {
    const std::vector<int> chosen = chooseTransports(identities, r, filter);
    for (int p = 0; p < ranks; ++p) {
      if (p == r) continue;
      const SlotShape shape = settings[chosen[p]]->slotShape();
      smallest = {std::min(smallest.slots, shape.slots), std::min(smallest.bytes, shape.bytes)};
    }
  }
  return ranks > 1 ? smallest : settings[0]->slotShape();
}

// The slots of the link between the first two hosts' first ranks (every
// link between hosts is of one kind): Team::acrossSlotBytes and, on two
// hosts, Team::twoHostSegmentBytes as a launch would find them.
SlotShape acrossHostsSlots(const std::vector<int>& ranksPerHost, const std::string& transports) {
  const std::vector<RankIdentity> identities = simulatedIdentities(ranksPerHost);
  const std::vector<int> chosen = chooseTransports(identities, 0, parseTransportFilter(transports, "LOOM_TRANSPORTS"));
  return readKindSettings()[chosen[ranksPerHost[0]]]->slotShape();
}

void printPlan(std::ostream& os, const Topology& t, const std::vector<int>& ranksPerHost, const std::string& mapBy,
               const std::string& transports) {
  PlanInputs in;
  const std::vector<RankIdentity> identities = simulatedIdentities(ranksPerHost);
  const int ranks = static_cast<int>(identities.size());
  const int most = *std::max_element(ranksPerHost.begin(), ranksPerHost.end());
  const HostCrowding crowding = mostCrowdedHost(simulateHosts(t, ranksPerHost, mapBy));
  const double ranksPerCpu = crowding.ranksPerCpu;
  in.shape = {
      ranks, static_cast<int>(ranksPerHost.size()), most, 1, ranksPerCpu, crowding.sockets, crowding.fewestCpus};
  in.fewestRanksOnAHost = *std::min_element(ranksPerHost.begin(), ranksPerHost.end());
  if (ranks > 1) in.slotBytes = layoutSlots(ranksPerHost, transports).bytes;
  if (ranksPerHost.size() >= 2) {
    const SlotShape across = acrossHostsSlots(ranksPerHost, transports);
    in.acrossSlotBytes = across.bytes;
    if (ranksPerHost.size() == 2) in.twoHostSegmentBytes = halfFifoBytes(across);
  }
  const CommConfig config = readCommConfig(nullptr);
  const Tuning& tuning = config.tuning;

  os << ranks << " ranks on " << ranksPerHost.size() << (ranksPerHost.size() == 1 ? " host" : " hosts");
  if (in.shape.sockets > 1) os << ", " << in.shape.sockets << " sockets a host";
  if (ranksPerCpu > 1) os << ", " << usString(ranksPerCpu) << " ranks per CPU (they run in turns)";
  os << "; LOOM_ALGO=" << (config.algorithm.empty() ? "(unset)" : config.algorithm)
     << (config.tuningFile.empty() ? std::string("; the cost model's built-in constants")
                                   : "; the cost model's constants from LOOM_TUNING_FILE=" + config.tuningFile)
     << "; without registered buffers or LOOM_CMA=1 (with them, the model weighs single-copy transfers "
        "too)\n";
  for (const Row& row : kRows) printRow(os, row, in, tuning);
  os << "Barrier: " << describe(kBarrierRow, in, tuning, 0) << "\n";
}

}  // namespace loom::topo

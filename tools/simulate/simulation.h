// The schedule simulator: every algorithm of a collective on P virtual
// ranks (virtual_ranks.h) over a timeline of the layout's links, each
// rank's result checked exactly against sums computed here, with the
// predicted time, bus bandwidth, and the messages and bytes that crossed
// each class of link. loom-topo --simulate prints and draws it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/algorithm_table.h"
#include "collectives/team.h"
#include "transport/mem/mem_timeline.h"

namespace loom::simulate {

struct SimulationLayout {
  std::vector<int> hostOf;  // by rank, hosts numbered from 0 in rank order
  SlotShape shape{8, 128 * 1024};
  Tuning tuning;  // its cost constants give the links' latencies and bandwidths
  // What the messages in flight may take (at a page at least each): past it
  // a point throws mem::BufferLimitReached.
  size_t memoryBudget = size_t{2} << 30;
};

struct SimulatedPoint {
  TunedCollective collective = TunedCollective::kAllReduce;
  std::string asked;  // the algorithm LOOM_ALGO would name, or "auto"
  std::string ran;    // what the schedule noted it ran
  int nranks = 0;
  size_t bytes = 0;  // as nccl-tests' size: AllReduce's buffer, AllGather's result, ReduceScatter's input
  double predictedUs = 0;
  double busGBs = 0;
  uint32_t steps = 0;        // the longest chain of messages each waiting for the one before
  mem::LinkTraffic local;    // over every rank, within hosts
  mem::LinkTraffic network;  // between hosts
  uint64_t sweeps = 0;
  double wallSeconds = 0;  // what simulating it took here
};

// The collectives the simulator runs, and the algorithms of the table that
// serve each.
const std::vector<TunedCollective>& simulatedCollectives();
std::vector<TunedAlgorithm> simulatedAlgorithms(TunedCollective collective);

// Runs `collective` with `algorithm` alone allowed (kCount: the automatic
// choice) on the layout's ranks at `bytes`, and checks every rank's result;
// throws loom::Error naming the first rank and element that differ, and
// mem::BufferLimitReached where its messages in flight pass the budget.
SimulatedPoint simulatePoint(const SimulationLayout& layout, TunedCollective collective, TunedAlgorithm algorithm,
                             size_t bytes);

// What simulatePoint needs in memory for a point: the ranks' buffers, and
// where every rank posts to every peer before taking anything in (all-pairs),
// a slot buffer for each message, of which a page at least is touched.
size_t simulationMemoryBytes(TunedCollective collective, TunedAlgorithm algorithm, int nranks, size_t bytes,
                             const SlotShape& shape);

}  // namespace loom::simulate

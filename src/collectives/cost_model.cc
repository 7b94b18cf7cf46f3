#include "collectives/cost_model.h"

#include <algorithm>
#include <cmath>

#include "collectives/rooted_shape.h"

namespace loom {
namespace {

// The link the built-in network's constants describe, in Mbit/s.
constexpr double kBuiltInLinkMbps = 10000;

int ceilLog2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

int floorLog2(int n) {
  int k = 0;
  while ((2 << k) <= n) ++k;
  return k;
}

bool rootedAlgorithm(TunedAlgorithm algorithm) {
  return algorithm == TunedAlgorithm::kRing || algorithm == TunedAlgorithm::kTree ||
         algorithm == TunedAlgorithm::kBinomial;
}

// Broadcast and Reduce along one of the schedule's paths, pipelined by
// chunks: the first chunk down (or up) the path, each step passing it on
// whole, then the busiest rank's passes for every further chunk.
Traffic rootedTraffic(TunedCollective collective, TunedAlgorithm algorithm, const RootedShape& shape,
                      const RootedPath& path, double n, double chunkBytes) {
  const bool reduce = collective == TunedCollective::kReduce;
  const double chunks = std::max(1.0, std::ceil(n / chunkBytes));
  const double chunk = n / chunks;
  const double passes = (chunks - 1) * (reduce ? shape.busiestReducePasses : shape.busiestBroadcastPasses);
  const double meanPasses = (chunks - 1) * (reduce ? shape.meanReducePasses : shape.meanBroadcastPasses);
  const double passesPerHop = reduce ? 1.0 : static_cast<double>(path.hops + path.sends) / path.hops;
  return {1.0 * path.hops, passes * chunk,    false, passes, algorithm != TunedAlgorithm::kRing, chunk * passesPerHop,
          false,           meanPasses * chunk};
}

Traffic barrierTraffic(TunedAlgorithm algorithm, int p) {
  switch (algorithm) {
    case TunedAlgorithm::kRing: return {2.0 * p, 0, false};  // around twice
    case TunedAlgorithm::kAllPairs: return {1, 0, true, 2.0 * (p - 2)};
    case TunedAlgorithm::kDissemination: return {1.0 * ceilLog2(p), 0, true, 0, true};
    default: return {-1, 0, false};
  }
}

}  // namespace

// Each schedule as its file runs it (ring_allreduce.cc, double_tree.cc,
// halving_doubling.cc, bruck_allgather.cc, all_pairs.cc).
Traffic trafficOf(TunedCollective collective, TunedAlgorithm algorithm, int p, double n, double chunkBytes) {
  const double share = static_cast<double>(p - 1) / p;  // of the buffer, what a rank sends in a ring
  const int below = 1 << floorLog2(p);                  // halving/doubling folds the rest into this
  const bool folded = below != p;
  const double belowShare = static_cast<double>(below - 1) / below;
  switch (collective) {
    case TunedCollective::kAllReduce:
      switch (algorithm) {
        case TunedAlgorithm::kRing: return {2.0 * (p - 1), 2 * share * n, false};
        // One step, but a message to and from every peer.
        case TunedAlgorithm::kAllPairs: return {1, (p - 1) * n, true, 2.0 * (p - 2)};
        // Two trees, each carrying half: an inner node of one tree takes
        // both children's halves up and sends both down.
        case TunedAlgorithm::kTree: return {2.0 * ceilLog2(p), 2 * n, true, 0, true};
        case TunedAlgorithm::kHalvingDoubling:
          return {2.0 * floorLog2(p) + (folded ? 2 : 0), 2 * belowShare * n + (folded ? 2 * n : 0), true, 0, true};
        // Single copy (registered.cc, direct.cc): an all-pairs swap of
        // addresses and one at the end; cross-memory attach also waits
        // between reducing and gathering, and reads each peer by a system
        // call (a further message each).
        case TunedAlgorithm::kRegistered: return {2, 2 * share * n, true, 4.0 * (p - 2), false, 0, true};
        case TunedAlgorithm::kDirect: return {3, 2 * share * n, true, 6.0 * (p - 2) + 2.0 * (p - 1), false, 0, true};
        default: return {-1, 0, false};
      }
    case TunedCollective::kAllGather:
      switch (algorithm) {
        case TunedAlgorithm::kRing: return {1.0 * (p - 1), share * n, false};
        // The last rotation copies the whole result once more.
        case TunedAlgorithm::kBruck: return {1.0 * ceilLog2(p), share * n + n, true, 0, true};
        // Slot order to rank order at the end; a folded pair's whole result once more.
        case TunedAlgorithm::kHalvingDoubling:
          return {1.0 * floorLog2(p) + (folded ? 2 : 0), belowShare * n + n + (folded ? n : 0), true, 0, true};
        case TunedAlgorithm::kRegistered: return {2, share * n, true, 4.0 * (p - 2), false, 0, true};
        case TunedAlgorithm::kDirect: return {2, share * n, true, 4.0 * (p - 2) + (p - 1), false, 0, true};
        default: return {-1, 0, false};
      }
    case TunedCollective::kReduceScatter:
      switch (algorithm) {
        case TunedAlgorithm::kRing: return {1.0 * (p - 1), share * n, false};
        // The input is copied into slot order first.
        case TunedAlgorithm::kHalvingDoubling:
          return {1.0 * floorLog2(p) + (folded ? 1 : 0), belowShare * n + n + (folded ? n : 0), true, 0, true};
        case TunedAlgorithm::kRegistered: return {2, share * n, true, 4.0 * (p - 2), false, 0, true};
        case TunedAlgorithm::kDirect: return {2, share * n, true, 4.0 * (p - 2) + (p - 1), false, 0, true};
        default: return {-1, 0, false};
      }
    // chain_broadcast.cc, tree_broadcast.cc, binomial_tree.cc.
    case TunedCollective::kBroadcast:
    case TunedCollective::kReduce: {
      // The path with the most hops; estimateUs weighs every path that may be longest.
      if (!rootedAlgorithm(algorithm)) return {-1, 0, false};
      if (p == 1) return {0, 0, false};
      const RootedShape& shape = rootedShape(algorithm, p);
      return rootedTraffic(collective, algorithm, shape, shape.paths.front(), n, chunkBytes);
    }
    case TunedCollective::kBarrier: return barrierTraffic(algorithm, p);
    default: return {-1, 0, false};
  }
}

namespace {

CostConstants makeDefaults() {
  CostConstants c;
  // Shared memory between cores of one host: a hand-over is a cache line
  // moving between cores plus the poll that sees it; a rank streams a few
  // GB/s through the FIFOs' slots.
  // Further messages in one step cost little: the peers' slots fill in
  // parallel.
  c.sharedMemory = {0.5, 5000, 0.05};
  // TCP between hosts: a socket's round of system calls and wire latency;
  // 88% of a 10 Gbit/s link (kBuiltInLinkMbps; headers and acks take the
  // rest); every further message is another pass through the kernel on
  // both ends.
  c.network = {15, 1100, 5};
  // Between the sockets of one host: a cache line crosses the interconnect
  // in a few hundred ns more than within a socket; the link carries tens
  // of GB/s each way for all the ranks whose copies cross it at once.
  c.socketLink = {0.8, 20000, 0.05};
  // A rank woken on a CPU another rank is running: measured on 2 CPUs, a
  // ring step took 1.0-1.1 us longer per further rank on a CPU.
  c.switchUs = 1.1;
  // A host's memory copies tens of GB/s for all its cores together: eight
  // ranks streaming at once reach it.
  c.memoryBytesPerUs = 40000;
  auto set = [&](TunedAlgorithm a, double stepUs, double efficiency) {
    c.stepUs[static_cast<int>(a)] = stepUs;
    c.efficiency[static_cast<int>(a)] = efficiency;
  };
  set(TunedAlgorithm::kRing, 0, 1.0);
  set(TunedAlgorithm::kAllPairs, 0, 1.0);
  set(TunedAlgorithm::kTree, 0.5, 0.6);
  set(TunedAlgorithm::kHalvingDoubling, 0.4, 0.8);
  set(TunedAlgorithm::kBruck, 0.2, 0.9);
  // Single copy: registered buffers read and written with plain loads and
  // stores, once per byte, where the ring also writes and reads a slot
  // (1.6x the ring's rate at 16 MiB on 8 ranks, docs/PERF.md).
  // Cross-memory attach pins the peer's pages on every read: 0.9x the
  // ring's rate there, and 88 us for a 1 KiB AllReduce's three steps.
  set(TunedAlgorithm::kRegistered, 0, 1.6);
  set(TunedAlgorithm::kDirect, 10, 0.9);
  return c;
}

}  // namespace

const CostConstants& defaultCosts() {
  static const CostConstants costs = makeDefaults();
  return costs;
}

double networkBytesPerUsAt(int64_t linkMbps) {
  const double lineBytesPerUs = static_cast<double>(linkMbps) / 8;
  return lineBytesPerUs * defaultCosts().network.bytesPerUs / (kBuiltInLinkMbps / 8);
}

bool modelRanks(TunedCollective collective, TunedAlgorithm algorithm) {
  // Without walking a tree: rootedShape remembers one rank count per tree.
  if (collective == TunedCollective::kBroadcast || collective == TunedCollective::kReduce)
    return rootedAlgorithm(algorithm);
  return trafficOf(collective, algorithm, 2, 1).steps >= 0;
}

namespace {

// The boundary a team's slowest steps cross: the network between its
// hosts, or on one host the interconnect between the sockets its ranks
// are bound to; `groups` of at most `members` ranks on either side.
struct Boundary {
  const LinkCosts* link = nullptr;  // null: one host, one socket
  int groups = 1;
  int members = 1;
};

Boundary boundaryOf(const TeamShape& shape, const CostConstants& costs) {
  if (shape.hosts > 1) return {&costs.network, shape.hosts, shape.mostRanksOnAHost};
  if (shape.sockets > 1)
    return {&costs.socketLink, shape.sockets, (shape.mostRanksOnAHost + shape.sockets - 1) / shape.sockets};
  return {};
}

// One schedule's time from its traffic, over the link class its steps
// cross (cost_model.h).
double trafficUs(const Traffic& traffic, const TeamShape& shape, const CostConstants& costs, double stepUs,
                 double efficiency) {
  const Boundary boundary = boundaryOf(shape, costs);
  const bool crosses = boundary.link != nullptr;
  const LinkCosts& link = crosses ? *boundary.link : costs.sharedMemory;
  const int sharers = crosses ? shape.lanes * (traffic.everyRankAtOnce ? boundary.members : 1) : 1;
  // Only some steps wait on the boundary: a ring's chain of steps runs
  // through consecutive ranks, G of whose P links cross between its G
  // groups; a logarithmic schedule's distances double, so log2(P/G) of its
  // log2(P) steps stay within a group. The others wait on shared memory.
  double crossingSteps = traffic.steps;
  if (crosses && shape.nranks > boundary.groups && traffic.steps > 1 && !traffic.everyStepCrosses)
    crossingSteps *= traffic.logarithmic ? std::log2(boundary.groups) / std::log2(shape.nranks)
                                         : static_cast<double>(boundary.groups) / shape.nranks;
  const double withinSteps = traffic.steps - crossingSteps;
  // Ranks that share a CPU run in turns (cost_model.h).
  const double turns = std::max(1.0, shape.ranksPerCpu);
  // A step's whole chunk crosses at the link's rate or its CPU's, the slower.
  const double latencyUs =
      crossingSteps * (link.latencyUs + traffic.stepBytes / std::min(link.bytesPerUs, costs.sharedMemory.bytesPerUs)) +
      withinSteps * (costs.sharedMemory.latencyUs + traffic.stepBytes / costs.sharedMemory.bytesPerUs) +
      traffic.steps * (turns - 1) * costs.switchUs;
  // The busiest rank's bytes through its share of the link (and its CPU's
  // stream, which no link outruns), or every rank's copies through the
  // CPUs they share, or through the host's memory (its ranks, and the
  // lanes beside them, copy at once), whichever takes longest.
  const double meanBytes = traffic.meanBytes < 0 ? traffic.bytes : traffic.meanBytes;
  const double copying = static_cast<double>(shape.mostRanksOnAHost) * shape.lanes;
  const double streamBytesPerUs = std::min(link.bytesPerUs / sharers, costs.sharedMemory.bytesPerUs);
  const double bytesUs = std::max({traffic.bytes / (streamBytesPerUs * efficiency),
                                   meanBytes * turns / (costs.sharedMemory.bytesPerUs * efficiency),
                                   meanBytes * copying / (costs.memoryBytesPerUs * efficiency)});
  // Each step across hosts the host's link carries a message per sharer:
  // its stack and NIC take them one after another, their kernel passes
  // adding up as all-pairs' further messages do.
  const double queuedMessages = boundary.link == &costs.network ? crossingSteps * (sharers - 1) : 0;
  return latencyUs + turns * (traffic.steps * stepUs + traffic.messages * link.messageUs) +
         queuedMessages * link.messageUs + bytesUs;
}

}  // namespace

double estimateUs(TunedCollective collective, TunedAlgorithm algorithm, const TeamShape& shape, size_t bytes,
                  const CostConstants& costs, size_t chunkBytes) {
  const double n = static_cast<double>(bytes);
  const double chunk = static_cast<double>(std::max<size_t>(chunkBytes, 1));
  if (collective == TunedCollective::kBroadcast || collective == TunedCollective::kReduce) {
    if (!rootedAlgorithm(algorithm)) return -1;
    if (shape.nranks <= 1) return 0;
    // The longest of the paths that may be: the deepest where latency
    // rules, the one through most sends where the copies do.
    const RootedShape& rooted = rootedShape(algorithm, shape.nranks);
    double longestUs = 0;
    for (const RootedPath& path : rooted.paths)
      longestUs = std::max(longestUs,
                           trafficUs(rootedTraffic(collective, algorithm, rooted, path, n, chunk), shape, costs, 0, 1));
    return longestUs;
  }
  const Traffic traffic = trafficOf(collective, algorithm, shape.nranks, n, chunk);
  if (traffic.steps < 0) return -1;
  if (shape.nranks <= 1) return 0;
  if (collective == TunedCollective::kBarrier) return trafficUs(traffic, shape, costs, 0, 1);
  const int a = static_cast<int>(algorithm);
  return trafficUs(traffic, shape, costs, costs.stepUs[a], costs.efficiency[a]);
}

}  // namespace loom

// The cost model and the plan (collectives/cost_model.h, plan.h): the
// estimates grow as the schedules' steps and bytes do (a ring's latency
// with P, a tree's and halving/doubling's with log P), and the plan picks
// what its rules say on the layouts users run, under LOOM_ALGO.
#include "collectives/plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "collectives/binomial.h"
#include "collectives/rooted_shape.h"
#include "collectives/team.h"
#include "collectives/tree.h"

namespace loom {
// Named, as the unity build compiles this file with others of the folder.
namespace plan_test {

using C = TunedCollective;
using A = TunedAlgorithm;

PlanInputs layout(int hosts, int perHost) {
  PlanInputs in;
  in.shape = {hosts * perHost, hosts, perHost};
  in.slotBytes = 128 * 1024;
  return in;
}

Tuning tuning(const std::string& algo = "") {
  Tuning t;
  t.allowed = AlgorithmFilter::parse(algo);
  return t;
}

double us(C c, A a, const PlanInputs& in, size_t bytes) {
  return estimateUs(c, a, in.shape, bytes, defaultCosts());
}

TEST(CostModelTest, RingLatencyGrowsWithRanksAndLogarithmicOnesWithTheirLogarithm) {
  // 8 B: latency alone. From 64 to 1024 ranks (16x) the ring's time grows
  // about 16x, the tree's and halving/doubling's as log2 P: 10/6.
  const PlanInputs small = layout(64, 1), large = layout(1024, 1);
  EXPECT_NEAR(us(C::kAllReduce, A::kRing, large, 8) / us(C::kAllReduce, A::kRing, small, 8), 1023.0 / 63, 0.1);
  EXPECT_NEAR(us(C::kAllReduce, A::kTree, large, 8) / us(C::kAllReduce, A::kTree, small, 8), 10.0 / 6, 0.01);
  EXPECT_NEAR(us(C::kAllReduce, A::kHalvingDoubling, large, 8) / us(C::kAllReduce, A::kHalvingDoubling, small, 8),
              10.0 / 6, 0.01);
  EXPECT_NEAR(us(C::kAllGather, A::kBruck, large, 8) / us(C::kAllGather, A::kBruck, small, 8), 10.0 / 6, 0.01);
  EXPECT_NEAR(us(C::kAllGather, A::kRing, large, 8) / us(C::kAllGather, A::kRing, small, 8), 1023.0 / 63, 0.1);
}

TEST(CostModelTest, BandwidthTermsFollowTheBytesEachScheduleMoves) {
  // At 1 GiB the bytes dominate: the ring moves 2(P-1)/P of the buffer,
  // the double tree twice the buffer at its efficiency, so their ratio is
  // that of bytes over efficiencies.
  const PlanInputs in = layout(1, 8);
  const size_t gib = size_t{1} << 30;
  const CostConstants& k = defaultCosts();
  const double expected = (2.0 / k.efficiency[static_cast<int>(A::kTree)]) / (2.0 * 7 / 8);
  EXPECT_NEAR(us(C::kAllReduce, A::kTree, in, gib) / us(C::kAllReduce, A::kRing, in, gib), expected, 0.01);
  // Across hosts the logarithmic schedules share a host's link among its
  // ranks; the ring crosses each boundary once.
  const PlanInputs shared = layout(2, 4), alone = layout(8, 1);
  EXPECT_NEAR(us(C::kAllReduce, A::kHalvingDoubling, shared, gib) / us(C::kAllReduce, A::kHalvingDoubling, alone, gib),
              4, 0.05);
  EXPECT_NEAR(us(C::kAllReduce, A::kRing, shared, gib) / us(C::kAllReduce, A::kRing, alone, gib), 1, 0.01);
}

TEST(CostModelTest, AcrossHostsOnlyTheStepsThatCrossWaitOnTheNetwork) {
  const CostConstants& k = defaultCosts();
  const double net = k.network.latencyUs, shm = k.sharedMemory.latencyUs;
  // Latency alone (no bytes). A ring of 2 hosts of 4: 2 of its 8 links
  // cross hosts, so its 14 steps wait on the network a quarter of the time.
  EXPECT_NEAR(us(C::kAllReduce, A::kRing, layout(2, 4), 0), 14 * (net / 4 + shm * 3 / 4), 0.01);
  // One rank per host: every step crosses.
  EXPECT_NEAR(us(C::kAllReduce, A::kRing, layout(8, 1), 0), 14 * net, 0.01);
  // Halving/doubling on 2 hosts of 4: the first 2 of its 3 distances stay
  // within a host, the last crosses, with all 4 ranks' messages on the link.
  const double hd = 6 * k.stepUs[static_cast<int>(A::kHalvingDoubling)];
  EXPECT_NEAR(us(C::kAllReduce, A::kHalvingDoubling, layout(2, 4), 0),
              2 * net + 4 * shm + hd + 2 * 3 * k.network.messageUs, 0.01);
}

TEST(CostModelTest, OnlyTheSchedulesThatServeACollectiveAreRanked) {
  EXPECT_TRUE(modelRanks(C::kAllReduce, A::kTree));
  EXPECT_TRUE(modelRanks(C::kAllReduce, A::kAllPairs));
  EXPECT_FALSE(modelRanks(C::kAllReduce, A::kBruck));
  EXPECT_TRUE(modelRanks(C::kAllGather, A::kBruck));
  EXPECT_FALSE(modelRanks(C::kAllGather, A::kTree));
  EXPECT_TRUE(modelRanks(C::kReduceScatter, A::kHalvingDoubling));
  EXPECT_FALSE(modelRanks(C::kBroadcast, A::kBruck));
  EXPECT_LT(estimateUs(C::kAllGather, A::kTree, layout(1, 8).shape, 8, defaultCosts()), 0);
  EXPECT_EQ(estimateUs(C::kAllReduce, A::kRing, layout(1, 1).shape, 1 << 20, defaultCosts()), 0);
}

TEST(PlanTest, SixteenHostsTakeALogarithmicScheduleWhenSmallAndTheRingWhenLarge) {
  const PlanInputs in = layout(16, 1);
  const A small = planAllReduce(in, tuning(), 8);
  EXPECT_TRUE(small == A::kTree || small == A::kHalvingDoubling) << algorithmName(small);
  EXPECT_EQ(planAllReduce(in, tuning(), 64 << 20), A::kRing);
  EXPECT_EQ(planAllGather(in, tuning(), 8 * 16), A::kBruck);
  EXPECT_EQ(planAllGather(in, tuning(), 64 << 20), A::kRing);
  EXPECT_EQ(planReduceScatter(in, tuning(), 8 * 16), A::kHalvingDoubling);
  EXPECT_EQ(planReduceScatter(in, tuning(), 64 << 20), A::kRing);
  // Two hosts of one rank: one all-pairs step beats two steps of anything.
  EXPECT_EQ(planAllReduce(layout(2, 1), tuning(), 8), A::kAllPairs);
}

// The least estimate among every row that applies, compositions included:
// what the TUNING line and loom-topo --plan print is what runs.
A leastEstimate(C c, const PlanInputs& in, const Tuning& t, size_t bytes) {
  A best = A::kRing;
  double bestUs = -1;
  for (A a : weighedAlgorithms(c, in, t, bytes)) {
    const double estimate = planEstimateUs(c, a, in, t, bytes);
    if (bestUs < 0 || estimate < bestUs) {
      best = a;
      bestUs = estimate;
    }
  }
  return best;
}

// Two hosts as a TCP link's FIFO (8 slots of 256 KiB) segments them.
PlanInputs twoHosts(int first, int second) {
  PlanInputs in = layout(2, std::max(first, second));
  in.shape.nranks = first + second;
  in.fewestRanksOnAHost = std::min(first, second);
  in.twoHostSegmentBytes = 4 * 256 * 1024;
  return in;
}

TEST(PlanTest, HostsOfSeveralRanksGoThroughLeadersWhenSmallAndInStepsWhenLarge) {
  const PlanInputs two = twoHosts(4, 4);
  EXPECT_EQ(planAllReduce(two, tuning(), 8), A::kHostLeaders);
  EXPECT_EQ(planAllGather(two, tuning(), 8 * 8), A::kHostLeaders);
  // Two hosts: the steps halve what a host's link carries and overlap.
  for (size_t bytes : {size_t{1} << 20, size_t{64} << 20}) {
    EXPECT_EQ(planAllReduce(two, tuning(), bytes), A::kHierarchical) << bytes;
    EXPECT_EQ(planAllGather(two, tuning(), bytes), A::kHierarchical) << bytes;
    EXPECT_EQ(planReduceScatter(two, tuning(), bytes), A::kHierarchical) << bytes;
  }
  // Sixteen hosts of 8: small calls through the leaders, which cross hosts
  // in a logarithmic schedule; 64 KiB in steps. From 1 MiB the flat ring:
  // a host's link carries 2 x 15/16 of the buffer in steps against the
  // ring's 2 x 127/128, the steps within hosts add to it without
  // overlapping it, and only 16 of the ring's 128 links wait on the network.
  const PlanInputs sixteen = layout(16, 8);
  EXPECT_EQ(planAllReduce(sixteen, tuning(), 8), A::kHostLeaders);
  EXPECT_EQ(planAllReduce(sixteen, tuning(), 64 << 10), A::kHierarchical);
  EXPECT_EQ(planAllReduce(sixteen, tuning(), 1 << 20), A::kRing);
  EXPECT_EQ(planAllGather(sixteen, tuning(), 1 << 20), A::kRing);
  EXPECT_EQ(planReduceScatter(sixteen, tuning(), 1 << 20), A::kRing);
  EXPECT_EQ(planAllReduce(sixteen, tuning(), 64 << 20), A::kRing);
  // Uneven hosts: in steps, the larger host's further ranks handing their
  // blocks to the local indices every host has; a host's link carries a
  // block per rank of it where the flat ring's carries 4 of 5.
  const PlanInputs uneven = twoHosts(3, 2);
  EXPECT_EQ(planAllReduce(uneven, tuning(), 64 << 20), A::kHierarchical);
  EXPECT_EQ(planAllGather(uneven, tuning(), 64 << 20), A::kHierarchical);
  EXPECT_EQ(planReduceScatter(uneven, tuning(), 64 << 20), A::kHierarchical);
  // Hosts of 1 and 3 ranks: AllGather and ReduceScatter would carry the
  // larger host's blocks in three rounds: the flat ring, unless asked.
  const PlanInputs lopsided = twoHosts(1, 3);
  EXPECT_EQ(planAllReduce(lopsided, tuning(), 64 << 20), A::kHierarchical);
  EXPECT_EQ(planAllGather(lopsided, tuning(), 64 << 20), A::kRing);
  EXPECT_EQ(planReduceScatter(lopsided, tuning(), 64 << 20), A::kRing);
  EXPECT_EQ(planAllGather(lopsided, tuning("allgather:hierarchical"), 64 << 20), A::kHierarchical);
  // At every size and on every layout, the least estimate runs.
  for (const PlanInputs& in : {two, sixteen, uneven, lopsided, twoHosts(2, 2), layout(3, 2)})
    for (size_t bytes = 8; bytes < (size_t{256} << 20); bytes = bytes * 3 / 2 + 4)
      for (C c : {C::kAllReduce, C::kAllGather, C::kReduceScatter}) {
        const A chosen = c == C::kAllReduce   ? planAllReduce(in, tuning(), bytes)
                         : c == C::kAllGather ? planAllGather(in, tuning(), bytes)
                                              : planReduceScatter(in, tuning(), bytes);
        EXPECT_EQ(chosen, leastEstimate(c, in, tuning(), bytes))
            << collectiveName(c) << " of " << bytes << " B on " << in.shape.nranks << " ranks";
      }
}

TEST(PlanTest, CompositionsAreEstimatedAsWhatTheyAreMadeOf) {
  const Tuning t = tuning();
  // Through leaders: in and out over shared memory around the cheapest
  // schedule among the leaders, which on 16 hosts is logarithmic.
  const PlanInputs sixteen = layout(16, 8);
  PlanInputs leaders = layout(16, 1);
  const double acrossUs = std::min(planEstimateUs(C::kAllReduce, A::kHalvingDoubling, leaders, t, 8),
                                   planEstimateUs(C::kAllReduce, A::kTree, leaders, t, 8));
  const double viaLeadersUs = planEstimateUs(C::kAllReduce, A::kHostLeaders, sixteen, t, 8);
  EXPECT_GT(viaLeadersUs, acrossUs);
  EXPECT_LT(viaLeadersUs, acrossUs + 2 * (t.costs.sharedMemory.latencyUs + 7 * t.costs.sharedMemory.messageUs));
  // On two hosts the steps overlap segment by segment: less than the steps
  // one after the other, more than the slower of them.
  PlanInputs overlapped = twoHosts(4, 4), sequential = overlapped;
  sequential.twoHostSegmentBytes = 0;
  const size_t bytes = size_t{64} << 20;
  const double pipelinedUs = planEstimateUs(C::kAllReduce, A::kHierarchical, overlapped, t, bytes);
  const double summedUs = planEstimateUs(C::kAllReduce, A::kHierarchical, sequential, t, bytes);
  const TeamShape host{4, 1, 4};
  const double withinUs = estimateUs(C::kReduceScatter, A::kRing, host, bytes, t.costs) +
                          estimateUs(C::kAllGather, A::kRing, host, bytes, t.costs);
  EXPECT_LT(pipelinedUs, summedUs);
  EXPECT_GT(pipelinedUs, summedUs - withinUs);
  // One segment: nothing to overlap.
  EXPECT_DOUBLE_EQ(planEstimateUs(C::kAllReduce, A::kHierarchical, overlapped, t, 1 << 20),
                   planEstimateUs(C::kAllReduce, A::kHierarchical, sequential, t, 1 << 20));
  // Lanes that cross at once share the link: four of them take four times
  // as long for their bytes as one alone.
  const TeamShape one{2, 2, 1, 1}, four{2, 2, 1, 4};
  EXPECT_NEAR(estimateUs(C::kAllReduce, A::kRing, four, size_t{1} << 30, t.costs) /
                  estimateUs(C::kAllReduce, A::kRing, one, size_t{1} << 30, t.costs),
              4, 0.01);
}

TEST(PlanTest, CompositionsSayWhatTheyRunAcrossHosts) {
  const Tuning t = tuning();
  const PlanInputs sixteen = layout(16, 8);
  // The leaders of 16 hosts: a logarithmic AllReduce; their AllGather swaps
  // packed hosts in one all-pairs step.
  const A leaders = stepAcrossHosts(C::kAllReduce, A::kHostLeaders, sixteen, t, 8);
  EXPECT_TRUE(leaders == A::kHalvingDoubling || leaders == A::kTree) << algorithmName(leaders);
  EXPECT_EQ(stepAcrossHosts(C::kAllGather, A::kHostLeaders, sixteen, t, 8 * 128), A::kAllPairs);
  // Even hosts: the lanes' AllGather and ReduceScatter take a logarithmic
  // schedule while small, the ring when large; uneven hosts the ring.
  const A small = stepAcrossHosts(C::kAllGather, A::kHierarchical, sixteen, t, 64 * 1024);
  EXPECT_TRUE(small == A::kBruck || small == A::kHalvingDoubling) << algorithmName(small);
  EXPECT_EQ(stepAcrossHosts(C::kReduceScatter, A::kHierarchical, sixteen, t, 8 * 128), A::kHalvingDoubling);
  EXPECT_EQ(stepAcrossHosts(C::kAllGather, A::kHierarchical, sixteen, t, size_t{256} << 20), A::kRing);
  EXPECT_EQ(stepAcrossHosts(C::kAllGather, A::kHierarchical, twoHosts(3, 2), t, 8 * 5), A::kRing);
  // LOOM_ALGO that leaves AllReduce the steps alone still lets the step
  // across weigh every flat schedule.
  EXPECT_EQ(stepAcrossHosts(C::kAllReduce, A::kHierarchical, sixteen, tuning("allreduce:hierarchical"), 8 * 128),
            stepAcrossHosts(C::kAllReduce, A::kHierarchical, sixteen, t, 8 * 128));
  // Other rows run no step across.
  EXPECT_EQ(stepAcrossHosts(C::kAllReduce, A::kRing, sixteen, t, 8), A::kCount);
}

TEST(PlanTest, OneRankPerHostOrSingleCopyReadsTakeNoSteps) {
  // One rank on each host: no steps within hosts to take.
  EXPECT_EQ(planAllGather(layout(3, 1), tuning(), 64 << 20), A::kRing);
  EXPECT_EQ(planReduceScatter(layout(3, 1), tuning(), 64 << 20), A::kRing);
  // Single-copy reads reaching every peer need neither.
  PlanInputs readable = layout(16, 8);
  readable.singleCopy = true;
  EXPECT_EQ(planAllReduce(readable, tuning(), 64 << 20), A::kRing);  // the large-message path: direct
  EXPECT_TRUE(mayCopyDirect(C::kAllReduce, readable, tuning(), 64 << 20));
}

// Single copy is a row like the others where it applies: registered
// buffers read and written once per byte win from a few KiB, cross-memory
// attach (its system calls pinning pages) loses to the ring with the
// built-in constants; neither runs across hosts in a composition.
TEST(PlanTest, SingleCopyIsWeighedWhereItApplies) {
  PlanInputs registered = layout(1, 8);
  registered.registeredWindows = true;
  EXPECT_EQ(planAllReduce(registered, tuning(), 8), A::kAllPairs);
  EXPECT_EQ(planAllReduce(registered, tuning(), 64 * 1024), A::kRegistered);
  EXPECT_EQ(planAllReduce(registered, tuning(), size_t{64} << 20), A::kRegistered);
  EXPECT_EQ(planAllGather(registered, tuning(), size_t{64} << 20), A::kRegistered);
  EXPECT_EQ(planReduceScatter(registered, tuning(), size_t{64} << 20), A::kRegistered);
  EXPECT_EQ(planAllReduce(layout(1, 8), tuning(), 64 * 1024), A::kRing);  // nothing registered
  // LOOM_DIRECT_MIN_BYTES bounds it from below; LOOM_ALGO excludes it.
  Tuning bounded = tuning();
  bounded.directMinBytes = 1 << 20;
  EXPECT_EQ(planAllReduce(registered, bounded, 64 * 1024), A::kRing);
  EXPECT_EQ(planAllReduce(registered, bounded, 1 << 20), A::kRegistered);
  EXPECT_EQ(planAllReduce(registered, tuning("^registered"), size_t{64} << 20), A::kRing);
  EXPECT_EQ(planAllReduce(registered, tuning("allreduce:registered"), 8), A::kRegistered);
  // Cross-memory attach: the ring's rate is higher; a machine whose
  // calibration says otherwise gets it.
  PlanInputs readable = layout(1, 8);
  readable.singleCopy = true;
  EXPECT_EQ(planAllReduce(readable, tuning(), size_t{64} << 20), A::kRing);
  Tuning fastCopies = tuning();
  fastCopies.costs.efficiency[static_cast<int>(A::kDirect)] = 3;
  EXPECT_EQ(planAllReduce(readable, fastCopies, size_t{64} << 20), A::kDirect);
  // At every size the least estimate runs.
  for (size_t bytes = 8; bytes < (size_t{256} << 20); bytes = bytes * 3 / 2 + 4)
    for (C c : {C::kAllReduce, C::kAllGather, C::kReduceScatter}) {
      const A chosen = c == C::kAllReduce   ? planAllReduce(registered, tuning(), bytes)
                       : c == C::kAllGather ? planAllGather(registered, tuning(), bytes)
                                            : planReduceScatter(registered, tuning(), bytes);
      EXPECT_EQ(chosen, leastEstimate(c, registered, tuning(), bytes)) << collectiveName(c) << " of " << bytes;
    }
  // The team's memo keeps a choice for registered buffers apart from one
  // without them: registering (or dropping) windows between calls of one
  // size changes what runs.
  RankedMemo memo;
  PlanInputs remembered = layout(1, 8);
  remembered.memo = &memo;
  EXPECT_EQ(planAllReduce(remembered, tuning(), 64 * 1024), A::kRing);
  remembered.registeredWindows = true;
  EXPECT_EQ(planAllReduce(remembered, tuning(), 64 * 1024), A::kRegistered);
  remembered.registeredWindows = false;
  EXPECT_EQ(planAllReduce(remembered, tuning(), 64 * 1024), A::kRing);
  // Across hosts the lanes run flat schedules, registered buffers or not.
  PlanInputs hosts = twoHosts(4, 4);
  hosts.registeredWindows = true;
  for (size_t bytes : {size_t{8}, size_t{64} << 10, size_t{64} << 20})
    for (A a : {A::kHostLeaders, A::kHierarchical}) {
      const A across = stepAcrossHosts(C::kAllReduce, a, hosts, tuning(), bytes);
      EXPECT_NE(across, A::kRegistered);
      EXPECT_NE(across, A::kDirect);
    }
}

TEST(PlanTest, OneHostWeighsAllPairsUpToItsLimitWithTheOthers) {
  const PlanInputs in = layout(1, 8);
  // One step wins while the data is small; every rank's buffer to and
  // from 7 peers loses to halving/doubling's 6 steps by 16 KiB.
  EXPECT_EQ(planAllReduce(in, tuning(), 8), A::kAllPairs);
  EXPECT_EQ(planAllReduce(in, tuning(), 4096), A::kAllPairs);
  EXPECT_EQ(planAllReduce(in, tuning(), 16 * 1024), A::kHalvingDoubling);
  EXPECT_EQ(planAllReduce(in, tuning(), 64 << 20), A::kRing);
  EXPECT_EQ(planAllReduce(layout(1, 2), tuning(), 16 * 1024), A::kAllPairs);  // one peer: one step
  // Whatever the model finds cheapest among what may run, runs: the plan
  // and the model agree at every size.
  for (size_t bytes = 8; bytes < (size_t{256} << 20); bytes = bytes * 3 / 2 + 4) {
    A best = A::kRing;
    for (A a : {A::kTree, A::kHalvingDoubling, A::kAllPairs}) {
      if (a == A::kAllPairs && bytes > tuning().allPairsMaxBytes) continue;
      if (us(C::kAllReduce, a, in, bytes) < us(C::kAllReduce, best, in, bytes)) best = a;
    }
    EXPECT_EQ(planAllReduce(in, tuning(), bytes), best) << bytes << " bytes";
  }
  // LOOM_ALLPAIRS_MAX_BYTES moves the limit; a slot smaller than the call
  // rules all-pairs out.
  Tuning lower = tuning();
  lower.allPairsMaxBytes = 1024;
  EXPECT_NE(planAllReduce(in, lower, 2048), A::kAllPairs);
  PlanInputs smallSlots = in;
  smallSlots.slotBytes = 4096;
  EXPECT_NE(planAllReduce(smallSlots, tuning(), 8192), A::kAllPairs);
}

TEST(PlanTest, LoomAlgoLimitsWhatTheModelWeighs) {
  const PlanInputs in = layout(16, 1);
  EXPECT_EQ(planAllReduce(in, tuning("ring"), 8), A::kRing);
  EXPECT_EQ(planAllReduce(in, tuning("allreduce:tree"), 64 << 20), A::kTree);
  EXPECT_EQ(planAllReduce(in, tuning("allreduce:halvingdoubling"), 64 << 20), A::kHalvingDoubling);
  EXPECT_EQ(planAllReduce(in, tuning("allreduce:ring,tree"), 8), A::kTree);
  // Without the ring, the cheapest of what is left, at every size.
  EXPECT_EQ(planAllReduce(in, tuning("^ring,allpairs"), 64 << 20), A::kHalvingDoubling);
  EXPECT_EQ(planAllReduce(in, tuning("^ring,allpairs,halvingdoubling"), 64 << 20), A::kTree);
  // Nothing ranked allowed: the ring runs it.
  EXPECT_EQ(planAllGather(in, tuning("allgather:direct"), 8), A::kRing);
  EXPECT_EQ(planAllGather(in, tuning("allgather:bruck"), 64 << 20), A::kBruck);
  EXPECT_EQ(planAllGather(in, tuning("^bruck,halvingdoubling"), 8), A::kRing);
  EXPECT_EQ(planAllGather(in, tuning("allgather:halvingdoubling"), 64 << 20), A::kHalvingDoubling);
  EXPECT_EQ(planReduceScatter(in, tuning("^halvingdoubling"), 8), A::kRing);
  // The candidates the TUNING line and loom-topo --plan list are the ones weighed.
  int count = 0;
  for (A a : weighedAlgorithms(C::kAllReduce, in, tuning("^tree"), 8)) {
    EXPECT_NE(a, A::kTree);
    ++count;
  }
  EXPECT_EQ(count, 3);  // ring, halvingdoubling, allpairs
}

// Every rank's path from the root of a rooted tree, walked over tree.h's
// and binomial.h's links with each parent sending to its children one
// after another in their order: hops, and sends waited through.
template <typename LinksOf>
std::vector<RootedPath> everyPath(int n, LinksOf linksOf) {
  std::vector<RootedPath> at(static_cast<size_t>(n));
  std::vector<bool> reached(static_cast<size_t>(n), false);
  reached[0] = true;
  for (bool changed = true; changed;) {  // parents before children: at most depth passes
    changed = false;
    for (int v = 0; v < n; ++v) {
      if (!reached[static_cast<size_t>(v)]) continue;
      const auto links = linksOf(n, v);
      for (int c = 0; c < links.childCount; ++c) {
        const auto child = static_cast<size_t>(links.children[c]);
        if (reached[child]) continue;
        at[child] = {at[static_cast<size_t>(v)].hops + 1, at[static_cast<size_t>(v)].sends + c + 1};
        reached[child] = changed = true;
      }
    }
  }
  return at;
}

// The longest path for a hop's and a send's weights, among `paths`.
double longest(const std::vector<RootedPath>& paths, double hop, double send) {
  double most = 0;
  for (const RootedPath& p : paths) most = std::max(most, p.hops * hop + p.sends * send);
  return most;
}

TEST(CostModelTest, RootedShapesKeepEveryPathThatMayBeTheLongest) {
  for (int n = 1; n <= 300; ++n) {
    const std::vector<RootedPath> binary = everyPath(n, treeLinks), binomial = everyPath(n, binomialLinks);
    for (auto [hop, send] : {std::pair{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}, {5.0, 1.0}, {1.0, 5.0}, {0.3, 2.0}}) {
      EXPECT_DOUBLE_EQ(longest(rootedShape(A::kTree, n).paths, hop, send), longest(binary, hop, send)) << n;
      EXPECT_DOUBLE_EQ(longest(rootedShape(A::kBinomial, n).paths, hop, send), longest(binomial, hop, send)) << n;
    }
    if (n >= 2) {
      ASSERT_EQ(rootedShape(A::kRing, n).paths.size(), 1u);
      EXPECT_EQ(rootedShape(A::kRing, n).paths[0].hops, n - 1);
      EXPECT_EQ(rootedShape(A::kRing, n).paths[0].sends, n - 1);
    }
  }
  // 8 ranks: the binary tree's deepest path 0 -> 1 -> 2 -> 3 (3 hops, 3
  // sends), and 0 -> 5 -> 7 through two second sends (2 hops, 4 sends);
  // the binomial tree's 0 -> 4 -> 6 -> 7 waits through 3 sends as its
  // others do.
  const RootedShape binary = rootedShape(A::kTree, 8), binomial = rootedShape(A::kBinomial, 8);
  ASSERT_EQ(binary.paths.size(), 2u);
  EXPECT_EQ(binary.paths[0].hops, 3);
  EXPECT_EQ(binary.paths[0].sends, 3);
  EXPECT_EQ(binary.paths[1].hops, 2);
  EXPECT_EQ(binary.paths[1].sends, 4);
  ASSERT_EQ(binomial.paths.size(), 1u);
  EXPECT_EQ(binomial.paths[0].hops, 3);
  EXPECT_EQ(binomial.paths[0].sends, 3);
  // The busiest rank's passes per chunk. Broadcast: a chain's middle rank
  // takes it in and passes it on; the binary tree's inner rank passes it
  // to two; the binomial root copies its input to its output and sends to
  // log2(n) children. Reduce: one pass per child (at least one).
  EXPECT_EQ(rootedShape(A::kRing, 8).busiestBroadcastPasses, 2);
  EXPECT_EQ(rootedShape(A::kRing, 8).busiestReducePasses, 1);
  EXPECT_EQ(binary.busiestBroadcastPasses, 3);
  EXPECT_EQ(binary.busiestReducePasses, 2);
  EXPECT_EQ(binomial.busiestBroadcastPasses, 4);
  EXPECT_EQ(binomial.busiestReducePasses, 3);
  EXPECT_EQ(rootedShape(A::kBinomial, 64).busiestBroadcastPasses, 7);
  EXPECT_EQ(rootedShape(A::kTree, 64).busiestBroadcastPasses, 3);
  EXPECT_EQ(rootedShape(A::kTree, 64).busiestReducePasses, 2);
  EXPECT_TRUE(rootedShape(A::kHalvingDoubling, 8).paths.empty());
}

TEST(CostModelTest, PipelinedRootedSchedulesPayTheirBusiestRanksPasses) {
  const double chunk = 128 * 1024;
  // One chunk: the rounds alone.
  const Traffic chainOne = trafficOf(C::kBroadcast, A::kRing, 8, 1000, chunk);
  EXPECT_EQ(chainOne.steps, 7);
  EXPECT_EQ(chainOne.stepBytes, 2 * 1000);  // out of one slot, into the next
  EXPECT_EQ(chainOne.bytes, 0);
  EXPECT_EQ(chainOne.messages, 0);
  // 10 chunks: after the first, each waits on the busiest rank's passes.
  // Broadcast on 8 ranks: 2 for the chain, 3 for the binary tree, 4 for the
  // binomial root. Reduce: 1 for the chain, 2 for the binary tree, whose
  // every hop is one pass (receive, reduce, send on).
  const double n = 10 * chunk;
  EXPECT_EQ(trafficOf(C::kBroadcast, A::kRing, 8, n, chunk).bytes, 9 * 2 * chunk);
  EXPECT_EQ(trafficOf(C::kReduce, A::kRing, 8, n, chunk).bytes, 9 * 1 * chunk);
  EXPECT_EQ(trafficOf(C::kReduce, A::kTree, 8, n, chunk).bytes, 9 * 2 * chunk);
  EXPECT_EQ(trafficOf(C::kReduce, A::kTree, 8, n, chunk).stepBytes, chunk);
  EXPECT_EQ(trafficOf(C::kBroadcast, A::kTree, 8, n, chunk).stepBytes, 2 * chunk);
  EXPECT_EQ(trafficOf(C::kBroadcast, A::kBinomial, 8, n, chunk).bytes, 9 * 4 * chunk);
  EXPECT_EQ(trafficOf(C::kBroadcast, A::kBinomial, 8, n, chunk).messages, 9 * 4);
  // One chunk: its longest path. The chain's 7 hops of 1000 B copied out
  // and in; the binary tree's longer of 3 hops and 3 sends, 2 hops and 4.
  const CostConstants& costs = defaultCosts();
  const double latency = costs.sharedMemory.latencyUs, copy = 1000 / costs.sharedMemory.bytesPerUs;
  EXPECT_DOUBLE_EQ(estimateUs(C::kBroadcast, A::kRing, layout(1, 8).shape, 1000, costs, 128 * 1024),
                   7 * (latency + 2 * copy));
  EXPECT_DOUBLE_EQ(estimateUs(C::kBroadcast, A::kTree, layout(1, 8).shape, 1000, costs, 128 * 1024),
                   std::max(3 * latency + 6 * copy, 2 * latency + 6 * copy));
  // Barrier: empty messages.
  EXPECT_EQ(trafficOf(C::kBarrier, A::kRing, 8, 0).steps, 16);  // the token around twice
  EXPECT_EQ(trafficOf(C::kBarrier, A::kDissemination, 9, 0).steps, 4);
  EXPECT_EQ(trafficOf(C::kBarrier, A::kAllPairs, 8, 0).messages, 12);
  EXPECT_TRUE(modelRanks(C::kBroadcast, A::kBinomial));
  EXPECT_FALSE(modelRanks(C::kBroadcast, A::kHalvingDoubling));
  EXPECT_TRUE(modelRanks(C::kBarrier, A::kDissemination));
  EXPECT_FALSE(modelRanks(C::kBarrier, A::kTree));
}

TEST(CostModelTest, RanksThatShareACpuRunInTurnsAndAHostsCopiesShareItsMemory) {
  const CostConstants& k = defaultCosts();
  PlanInputs crowded = layout(1, 8);
  crowded.shape.ranksPerCpu = 4;  // 8 ranks on 2 CPUs
  // The ring AllReduce: each of its 14 steps waits 3 switches, and its
  // copies share the CPUs: a quarter of one CPU's stream each.
  const double n = 1 << 20;
  EXPECT_DOUBLE_EQ(us(C::kAllReduce, A::kRing, crowded, 1 << 20),
                   14 * (k.sharedMemory.latencyUs + 3 * k.switchUs) + 2 * 7.0 / 8 * n * 4 / k.sharedMemory.bytesPerUs);
  // A CPU per rank, or more: no turns.
  PlanInputs roomy = layout(1, 8);
  roomy.shape.ranksPerCpu = 0.5;
  EXPECT_DOUBLE_EQ(us(C::kAllReduce, A::kRing, roomy, 1 << 20), us(C::kAllReduce, A::kRing, layout(1, 8), 1 << 20));
  // A step's own costs and further messages take turns too: all-pairs' 12
  // further messages and its step, 4 times.
  const int pairs = static_cast<int>(A::kAllPairs);
  const double allPairsUs = us(C::kAllReduce, A::kAllPairs, crowded, 8);
  EXPECT_NEAR(allPairsUs,
              k.sharedMemory.latencyUs + 3 * k.switchUs + 4 * (k.stepUs[pairs] + 12 * k.sharedMemory.messageUs) +
                  7 * 8 * 4 / (k.sharedMemory.bytesPerUs * k.efficiency[pairs]),
              1e-9);

  // Broadcast and Reduce: every rank's passes over each chunk wait on the
  // others'. A Broadcast's every rank takes the chunk in once and every
  // edge sends it once, in any tree: on shared CPUs the chain and both
  // trees' copies take as long, and they differ by their first chunk's
  // paths and their busiest rank's messages (2 a chunk in the chain, 3 in
  // the binary tree). The trees' are the shorter at every size (measured:
  // the binary tree won on 8 ranks of 2 CPUs up to 32 MiB).
  const size_t chunk = 128 * 1024, large = size_t{64} << 20;
  for (A a : {A::kRing, A::kTree, A::kBinomial}) {
    EXPECT_DOUBLE_EQ(rootedShape(a, 8).meanBroadcastPasses, 15.0 / 8) << algorithmName(a);
    const Traffic broadcast = trafficOf(C::kBroadcast, a, 8, 10.0 * chunk, chunk);
    EXPECT_DOUBLE_EQ(broadcast.meanBytes, 9 * 15.0 / 8 * chunk) << algorithmName(a);
  }
  const double chainFirstUs = estimateUs(C::kBroadcast, A::kRing, crowded.shape, chunk, k, chunk);
  const double treeFirstUs = estimateUs(C::kBroadcast, A::kTree, crowded.shape, chunk, k, chunk);
  EXPECT_NEAR(estimateUs(C::kBroadcast, A::kRing, crowded.shape, large, k, chunk) -
                  estimateUs(C::kBroadcast, A::kTree, crowded.shape, large, k, chunk),
              chainFirstUs - treeFirstUs - (large / chunk - 1) * (3 - 2) * k.sharedMemory.messageUs * 4,
              1e-6 * chainFirstUs);
  EXPECT_EQ(planBroadcastOrReduce(C::kBroadcast, crowded, tuning(), large), A::kTree);
  EXPECT_EQ(planBroadcastOrReduce(C::kBroadcast, layout(1, 8), tuning(), large), A::kRing);
  // A Reduce's chain passes each chunk once a rank; a tree's rank with two
  // children twice, so on shared CPUs the chain does less in all.
  EXPECT_DOUBLE_EQ(rootedShape(A::kRing, 8).meanReducePasses, 1);
  EXPECT_DOUBLE_EQ(rootedShape(A::kTree, 8).meanReducePasses, 11.0 / 8);
  EXPECT_DOUBLE_EQ(rootedShape(A::kBinomial, 8).meanReducePasses, 11.0 / 8);
  EXPECT_EQ(planBroadcastOrReduce(C::kReduce, crowded, tuning(), large), A::kRing);

  // The memory: 64 ranks with a CPU each stream at once, 64 x 5000 bytes/us
  // where the host's memory copies 40000: the ring's bytes take 8 times as
  // long as one CPU's stream would.
  EXPECT_DOUBLE_EQ(us(C::kAllReduce, A::kRing, layout(1, 64), 1 << 20),
                   126 * k.sharedMemory.latencyUs + 2 * 63.0 / 64 * n * 64 / k.memoryBytesPerUs);
  // Eight stream no more than the memory moves.
  EXPECT_DOUBLE_EQ(us(C::kAllReduce, A::kRing, layout(1, 8), 1 << 20),
                   14 * k.sharedMemory.latencyUs + 2 * 7.0 / 8 * n / k.sharedMemory.bytesPerUs);

  // The steps across hosts: each host runs its lanes at once, so the turns
  // are the lanes' share of the host's ranks.
  PlanInputs twoCrowded = layout(2, 8);
  twoCrowded.shape.ranksPerCpu = 4;
  EXPECT_DOUBLE_EQ(acrossHostsInputs(twoCrowded, 2, 2).shape.ranksPerCpu, 1);
  EXPECT_DOUBLE_EQ(acrossHostsInputs(twoCrowded, 2, 8).shape.ranksPerCpu, 4);
  // Where the hosts' CPUs are known, the host of fewest takes the most
  // turns: 8 ranks on 8 CPUs and 4 on 1, 4 lanes, all 4 on that one CPU.
  PlanInputs unevenCpus = layout(2, 8);
  unevenCpus.shape.ranksPerCpu = 4;
  unevenCpus.shape.fewestCpusOnAHost = 1;
  EXPECT_DOUBLE_EQ(acrossHostsInputs(unevenCpus, 2, 4).shape.ranksPerCpu, 4);
  twoCrowded.shape.fewestCpusOnAHost = 2;
  EXPECT_DOUBLE_EQ(acrossHostsInputs(twoCrowded, 2, 8).shape.ranksPerCpu, 4);
  // At every size the least estimate runs, crowded as uncrowded.
  for (size_t bytes = 8; bytes < (size_t{256} << 20); bytes = bytes * 3 / 2 + 4) {
    EXPECT_EQ(planAllReduce(crowded, tuning(), bytes), leastEstimate(C::kAllReduce, crowded, tuning(), bytes));
    EXPECT_EQ(planAllReduce(twoCrowded, tuning(), bytes), leastEstimate(C::kAllReduce, twoCrowded, tuning(), bytes));
    for (C c : {C::kBroadcast, C::kReduce})
      EXPECT_EQ(planBroadcastOrReduce(c, crowded, tuning(), bytes), leastEstimate(c, crowded, tuning(), bytes));
  }
}

TEST(CostModelTest, StepsBetweenSocketsCrossTheInterconnect) {
  CostConstants k = defaultCosts();
  k.memoryBytesPerUs = 1e9;  // the memory no sharer here
  TeamShape oneSocket{16, 1, 16}, twoSockets = oneSocket;
  twoSockets.sockets = 2;
  // 8 B: the ring's 30 steps, 2 of whose 16 links cross the interconnect
  // (a ring ordered by socket); halving/doubling's first 2 of 8 steps
  // cross, its distances of 8 ranks and more (its bytes add under 0.01 us).
  EXPECT_NEAR(
      estimateUs(C::kAllReduce, A::kRing, twoSockets, 8, k) - estimateUs(C::kAllReduce, A::kRing, oneSocket, 8, k),
      30 * 2.0 / 16 * (k.socketLink.latencyUs - k.sharedMemory.latencyUs), 1e-9);
  EXPECT_NEAR(estimateUs(C::kAllReduce, A::kHalvingDoubling, twoSockets, 8, k) -
                  estimateUs(C::kAllReduce, A::kHalvingDoubling, oneSocket, 8, k),
              2 * (k.socketLink.latencyUs - k.sharedMemory.latencyUs), 0.01);
  // 1 GiB: the ring crosses in one stream, within the interconnect; the
  // 8 ranks of a socket that halving/doubling sends from at once share it
  // (20000 bytes/us among 8 against a CPU's 5000 alone): twice as long.
  const size_t gib = size_t{1} << 30;
  EXPECT_NEAR(
      estimateUs(C::kAllReduce, A::kRing, twoSockets, gib, k) / estimateUs(C::kAllReduce, A::kRing, oneSocket, gib, k),
      1, 0.001);
  EXPECT_NEAR(estimateUs(C::kAllReduce, A::kHalvingDoubling, twoSockets, gib, k) /
                  estimateUs(C::kAllReduce, A::kHalvingDoubling, oneSocket, gib, k),
              k.sharedMemory.bytesPerUs / (k.socketLink.bytesPerUs / 8), 0.001);
  // Across hosts the network is the boundary, whatever the sockets.
  TeamShape hosts{16, 2, 8}, hostsAndSockets = hosts;
  hostsAndSockets.sockets = 2;
  EXPECT_EQ(estimateUs(C::kAllReduce, A::kHalvingDoubling, hostsAndSockets, gib, k),
            estimateUs(C::kAllReduce, A::kHalvingDoubling, hosts, gib, k));
}

TEST(PlanTest, BroadcastReduceAndBarrierTakeTheLeastEstimate) {
  const PlanInputs in = layout(1, 8);
  // Within a host, small calls take a tree (on 8 ranks both trees' longest
  // paths are 3 hops through 3 sends: the binary one, weighed first);
  // large ones the chain, whose ranks copy each chunk twice where the trees'
  // busiest copy it three times.
  for (C c : {C::kBroadcast, C::kReduce}) {
    EXPECT_EQ(planBroadcastOrReduce(c, in, tuning(), 8), A::kTree) << collectiveName(c);
    EXPECT_EQ(planBroadcastOrReduce(c, in, tuning(), size_t{64} << 20), A::kRing) << collectiveName(c);
    EXPECT_EQ(planBroadcastOrReduce(c, layout(16, 8), tuning(), size_t{64} << 20), A::kRing) << collectiveName(c);
  }
  // Many chunks on 64 ranks, with memory enough for all their copies at
  // once: the binomial root copies each to 6 children, the binary tree's
  // inner ranks copy it 3 times. Where the host's memory is what they share
  // (the built-in 40000 bytes/us: 8 ranks' streams), every rank's copies
  // wait on all the others', alike in every tree, and the binomial tree's
  // shorter paths win.
  Tuning roomy = tuning();
  roomy.costs.memoryBytesPerUs = 1e9;
  EXPECT_EQ(planBroadcastOrReduce(C::kBroadcast, layout(1, 64), roomy, 1 << 20), A::kTree);
  EXPECT_EQ(planBroadcastOrReduce(C::kBroadcast, layout(1, 64), tuning(), 1 << 20), A::kBinomial);
  // One chunk across 16 hosts: the binomial tree's paths (at most 4 hops,
  // 4 sends) against the binary tree's (4 hops through 4 sends, or 3
  // through 6).
  EXPECT_EQ(planBroadcastOrReduce(C::kBroadcast, layout(16, 1), tuning(), 64 * 1024), A::kBinomial);
  // At every size and on every layout, the least estimate runs.
  for (const PlanInputs& layoutIn : {in, layout(1, 3), layout(1, 17), layout(2, 4), layout(16, 8), layout(64, 1)})
    for (size_t bytes = 8; bytes < (size_t{256} << 20); bytes = bytes * 3 / 2 + 4)
      for (C c : {C::kBroadcast, C::kReduce})
        EXPECT_EQ(planBroadcastOrReduce(c, layoutIn, tuning(), bytes), leastEstimate(c, layoutIn, tuning(), bytes))
            << collectiveName(c) << " of " << bytes << " B on " << layoutIn.shape.nranks << " ranks";
  // LOOM_TREE_MAX_BYTES bounds the trees: above it, the chain.
  Tuning bounded = tuning();
  bounded.treeMaxBytes = 4096;
  EXPECT_EQ(planBroadcastOrReduce(C::kReduce, in, bounded, 4096), A::kTree);
  EXPECT_EQ(planBroadcastOrReduce(C::kReduce, in, bounded, 4097), A::kRing);
  bounded.treeMaxBytes = 0;
  EXPECT_EQ(planBroadcastOrReduce(C::kBroadcast, in, bounded, 8), A::kRing);
  // Without the one tree, the other; either left alone runs at every size.
  EXPECT_EQ(planBroadcastOrReduce(C::kBroadcast, in, tuning("^binomial"), 8), A::kTree);
  EXPECT_EQ(planBroadcastOrReduce(C::kReduce, in, tuning("^tree"), 8), A::kBinomial);
  EXPECT_EQ(planBroadcastOrReduce(C::kReduce, in, tuning("reduce:tree"), 1 << 20), A::kTree);
  EXPECT_EQ(planBroadcastOrReduce(C::kReduce, in, tuning("binomial"), size_t{64} << 20), A::kBinomial);
  EXPECT_EQ(planBroadcastOrReduce(C::kReduce, in, tuning("^binomial,tree"), 8), A::kRing);
  EXPECT_EQ(planBroadcastOrReduce(C::kReduce, layout(1, 2), tuning(), 8), A::kRing);  // two ranks: the chain
  // Barrier: all-pairs' one step on a few ranks; its further messages
  // outweigh dissemination's rounds on many, and across hosts, where each
  // rank's message to each peer on another host passes the host's link.
  EXPECT_EQ(planBarrier(in, tuning()), A::kAllPairs);
  EXPECT_EQ(planBarrier(layout(1, 1024), tuning()), A::kDissemination);
  EXPECT_EQ(planBarrier(layout(2, 4), tuning()), A::kDissemination);
  for (const PlanInputs& layoutIn : {in, layout(1, 3), layout(1, 64), layout(1, 1024), layout(2, 4), layout(16, 1)})
    EXPECT_EQ(planBarrier(layoutIn, tuning()), leastEstimate(C::kBarrier, layoutIn, tuning(), 0))
        << layoutIn.shape.nranks << " ranks";
  EXPECT_EQ(planBarrier(layout(1, 1024), tuning("barrier:allpairs")), A::kAllPairs);
  EXPECT_EQ(planBarrier(in, tuning("barrier:dissemination")), A::kDissemination);
  EXPECT_EQ(planBarrier(in, tuning("barrier:ring")), A::kRing);
}

}  // namespace plan_test
}  // namespace loom

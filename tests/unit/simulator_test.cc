// The schedule simulator (tools/simulate/): every collective and algorithm
// on virtual ranks of one thread, each rank's result checked exactly by the
// simulator (it throws on the first wrong element), on one host, on even
// and uneven hosts, at rank counts the threads' tests cannot reach; the
// messages it counts per link class against what each schedule must send;
// its timeline against a hand computation; and what a stuck or mismatched
// schedule reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/error.h"
#include "collectives/collectives.h"
#include "collectives/cost_model.h"
#include "simulate/simulation.h"
#include "simulate/virtual_ranks.h"
#include "transport/mem/mem_fabric.h"
#include "transport/mem/mem_timeline.h"

namespace loom::test {
// Named, as the unity build compiles this file with others of the folder.
namespace simulator {

using simulate::SimulatedPoint;
using simulate::SimulationLayout;

// `counts[h]` ranks on host h, numbered host by host.
SimulationLayout layoutOf(const std::vector<int>& counts, size_t slotBytes = 4096) {
  SimulationLayout layout;
  for (size_t h = 0; h < counts.size(); ++h)
    for (int i = 0; i < counts[h]; ++i) layout.hostOf.push_back(static_cast<int>(h));
  layout.shape = {4, slotBytes};
  return layout;
}

std::string describe(TunedCollective c, TunedAlgorithm a, int p, size_t bytes) {
  return std::string(collectiveName(c)) + " " + (a == TunedAlgorithm::kCount ? "auto" : algorithmName(a)) + " on " +
         std::to_string(p) + " ranks, " + std::to_string(bytes) + " B";
}

// Every algorithm (and the automatic choice) of every simulated collective
// on `layout`, at sizes from one element per rank to several slots each;
// true where the algorithm asked for ran (it may not apply to the layout).
void everyAlgorithmIsExact(const SimulationLayout& layout, const std::vector<size_t>& sizes) {
  const int p = static_cast<int>(layout.hostOf.size());
  for (TunedCollective c : simulate::simulatedCollectives()) {
    std::vector<TunedAlgorithm> algorithms = simulate::simulatedAlgorithms(c);
    algorithms.push_back(TunedAlgorithm::kCount);
    for (TunedAlgorithm a : algorithms)
      for (size_t bytes : sizes) {
        SimulatedPoint point;
        try {
          point = simulate::simulatePoint(layout, c, a, bytes);
        } catch (const Error& e) {
          ADD_FAILURE() << describe(c, a, p, bytes) << ": " << e.what();
          continue;
        }
        EXPECT_FALSE(point.ran.empty()) << describe(c, a, p, bytes);
        if (p > 1 && point.bytes > 0) {
          EXPECT_GT(point.predictedUs, 0) << describe(c, a, p, bytes);
        }
      }
  }
}

class OneHostTest : public testing::TestWithParam<int> {};

TEST_P(OneHostTest, EveryAlgorithmOfEveryCollectiveIsExact) {
  const int p = GetParam();
  // One element a rank, an odd count across a few 4 KiB slots, and many slots.
  everyAlgorithmIsExact(layoutOf({p}), {4 * static_cast<size_t>(p), 4 * 1001 * static_cast<size_t>(p), 96 * 1024});
}

std::vector<int> oneHostCounts() {
  std::vector<int> counts;
  for (int n = 1; n <= 17; ++n) counts.push_back(n);
  for (int n : {24, 32, 64, 100}) counts.push_back(n);
  return counts;
}
INSTANTIATE_TEST_SUITE_P(Ranks, OneHostTest, testing::ValuesIn(oneHostCounts()));

class HostsTest : public testing::TestWithParam<std::vector<int>> {};

TEST_P(HostsTest, EveryAlgorithmOfEveryCollectiveIsExact) {
  int p = 0;
  for (int n : GetParam()) p += n;
  everyAlgorithmIsExact(layoutOf(GetParam()), {4 * static_cast<size_t>(p), 4 * 777 * static_cast<size_t>(p)});
}

std::string hostsName(const testing::TestParamInfo<std::vector<int>>& info) {
  std::string name;
  for (int n : info.param) name += (name.empty() ? "" : "x") + std::to_string(n);
  return name;
}
INSTANTIATE_TEST_SUITE_P(Layouts, HostsTest,
                         testing::Values(std::vector<int>{2, 2}, std::vector<int>{4, 4}, std::vector<int>{3, 2, 4},
                                         std::vector<int>{1, 3}, std::vector<int>{8, 8, 8, 8}),
                         hostsName);

// AllReduce in steps on two hosts goes in segments of half a FIFO (4 slots
// of 4 KiB here: 8 KiB), the local steps of one beside the network
// exchange of the one before: exact, and each lane's block crosses the
// link once each way, as the steps one after the other send it. Hosts
// 0 1 1 0 put lane 1's lower team index (rank 2) on the second host.
TEST(SimulatorTest, TwoHostAllReduceInSegmentsIsExactAndSendsEachBlockOnce) {
  for (const std::vector<int>& hostOf : {std::vector<int>{0, 0, 1, 1}, std::vector<int>{0, 0, 0, 1, 1},
                                         std::vector<int>{0, 1, 1, 1}, std::vector<int>{0, 1, 1, 0}})
    for (size_t bytes : {size_t{40000}, size_t{4 * 30011}}) {
      SimulationLayout layout = layoutOf({});
      layout.hostOf = hostOf;
      const int p = static_cast<int>(hostOf.size());
      const std::string what = describe(TunedCollective::kAllReduce, TunedAlgorithm::kHierarchical, p, bytes);
      const SimulatedPoint point =
          simulate::simulatePoint(layout, TunedCollective::kAllReduce, TunedAlgorithm::kHierarchical, bytes);
      EXPECT_EQ(point.ran, "hierarchical") << what;
      EXPECT_EQ(point.network.bytes, 2 * bytes) << what;
    }
}

// AllGather and ReduceScatter in steps on hosts of unequal sizes whose ranks
// are numbered across them (hosts 0 1 0 1 0, and 0 1 2 2 1 2 2): the local
// indices every host has carry the further ranks' blocks in later rounds,
// and every block crosses each link of the lanes' ring but one: on H hosts
// (H-1) times the buffer over the network (a flat ring on 2 hosts: 8 blocks
// of 5, where the steps send 5).
TEST(SimulatorTest, StepsOnUnevenInterleavedHostsAreExact) {
  for (const std::vector<int>& hostOf : {std::vector<int>{0, 1, 0, 1, 0}, std::vector<int>{0, 1, 2, 2, 1, 2, 2}}) {
    SimulationLayout layout = layoutOf({});
    layout.hostOf = hostOf;
    const size_t p = hostOf.size();
    const uint64_t hosts = static_cast<uint64_t>(*std::max_element(hostOf.begin(), hostOf.end())) + 1;
    for (TunedCollective c : {TunedCollective::kAllGather, TunedCollective::kReduceScatter})
      for (size_t bytes : {4 * p, 4 * 3001 * p}) {
        const std::string what = describe(c, TunedAlgorithm::kHierarchical, static_cast<int>(p), bytes);
        const SimulatedPoint point = simulate::simulatePoint(layout, c, TunedAlgorithm::kHierarchical, bytes);
        EXPECT_EQ(point.ran, "hierarchical") << what;
        EXPECT_EQ(point.network.bytes, (hosts - 1) * bytes) << what;
      }
  }
}

// On even hosts the lanes of AllGather and ReduceScatter in steps cross
// hosts in the cost model's cheapest flat schedule: on 8 hosts of 2 at a
// small size a logarithmic one (3 steps across, where the ring takes 7),
// besides a ring within each host per host's blocks (8 of one step).
// Hosts numbered so that lane 1's team runs through the hosts backwards:
// its blocks come back in its own order and go to their hosts' places.
TEST(SimulatorTest, EvenHostsCrossInTheCheapestFlatSchedule) {
  for (const std::vector<int>& hostOf :
       {std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7},
        std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 7, 6, 5, 4, 3, 2, 1, 0}}) {
    SimulationLayout layout = layoutOf({});
    layout.hostOf = hostOf;
    for (TunedCollective c : {TunedCollective::kAllGather, TunedCollective::kReduceScatter}) {
      const std::string what = describe(c, TunedAlgorithm::kHierarchical, 16, 4 * 16);
      const SimulatedPoint point = simulate::simulatePoint(layout, c, TunedAlgorithm::kHierarchical, 4 * 16);
      EXPECT_EQ(point.ran, "hierarchical") << what;
      EXPECT_EQ(point.steps, 3u + 8u) << what;
      EXPECT_GT(point.network.messages, 0u) << what;
    }
  }
}

// The point the tool's --simulate promises: 1024 ranks, every AllReduce
// algorithm, exact, with tree and halving/doubling latency growing with
// log P and the ring's with P.
TEST(SimulatorTest, AllReduceOn1024RanksIsExactAndScalesAsEachScheduleMust) {
  const std::vector<TunedAlgorithm> algorithms = {TunedAlgorithm::kRing, TunedAlgorithm::kTree,
                                                  TunedAlgorithm::kHalvingDoubling};
  std::vector<std::vector<double>> us(algorithms.size());
  for (int p : {256, 512, 1024}) {
    for (size_t a = 0; a < algorithms.size(); ++a) {
      const SimulatedPoint point =
          simulate::simulatePoint(layoutOf({p}), TunedCollective::kAllReduce, algorithms[a], 8);
      EXPECT_EQ(point.ran, algorithmName(algorithms[a]));
      us[a].push_back(point.predictedUs);
    }
  }
  // Doubling the ranks doubles a ring's steps, and adds a step or two to the others.
  for (size_t i = 1; i < us[0].size(); ++i) {
    EXPECT_NEAR(us[0][i] / us[0][i - 1], 2.0, 0.05) << "ring";
    EXPECT_LT(us[1][i] - us[1][i - 1], 0.2 * us[1][i - 1]) << "tree";
    EXPECT_LT(us[2][i] - us[2][i - 1], 0.2 * us[2][i - 1]) << "halvingdoubling";
  }
  EXPECT_LT(us[1].back() * 20, us[0].back());
  EXPECT_LT(us[2].back() * 20, us[0].back());
}

// A ring AllReduce whose every block fits one slot sends one message a step,
// 2 (P - 1) steps per rank; across hosts the ring crosses each boundary
// once each way around, so two of its P links are network links (and the
// rest local).
TEST(SimulatorTest, CountsTheRingsMessagesPerLinkClass) {
  for (const std::vector<int>& hosts : {std::vector<int>{6}, std::vector<int>{3, 3}, std::vector<int>{2, 2, 2}}) {
    const int p = 6;
    const SimulatedPoint point =
        simulate::simulatePoint(layoutOf(hosts), TunedCollective::kAllReduce, TunedAlgorithm::kRing, 4 * 6 * 100);
    const uint64_t perLink = 2 * (p - 1);
    const uint64_t crossings = hosts.size() == 1 ? 0 : hosts.size();
    EXPECT_EQ(point.network.messages, crossings * perLink) << hosts.size() << " hosts";
    EXPECT_EQ(point.local.messages, (p - crossings) * perLink) << hosts.size() << " hosts";
    EXPECT_EQ(point.local.bytes + point.network.bytes, static_cast<uint64_t>(p) * perLink * 100 * 4);
  }
}

// The cross-host step of the AllReduce in steps is the cost model's choice
// for one rank per host with every local index crossing at once: on 16
// hosts of 4 a 16 KiB block each, a logarithmic or ring step sends at most
// twice the blocks over the network, where all-pairs would send each block
// to all 15 other hosts.
TEST(SimulatorTest, TheHierarchicalCrossHostStepSendsNoBlockToEveryHost) {
  const SimulatedPoint point = simulate::simulatePoint(layoutOf(std::vector<int>(16, 4)), TunedCollective::kAllReduce,
                                                       TunedAlgorithm::kHierarchical, 64 * 1024);
  EXPECT_EQ(point.ran, "hierarchical");
  EXPECT_LE(point.network.bytes, 64u * 2 * 16 * 1024);
  EXPECT_GT(point.network.bytes, 0u);
}

// The leaders of many hosts AllReduce their hosts' sums in the cost
// model's cheapest schedule among them: halving/doubling on 16 hosts, and
// on 40 with the 8 hosts past 32 folded in. Exact, and far fewer messages
// over the network than one all-pairs step among the leaders.
TEST(SimulatorTest, HostLeadersCrossManyHostsInALogarithmicSchedule) {
  for (int hosts : {16, 40}) {
    const SimulatedPoint point = simulate::simulatePoint(layoutOf(std::vector<int>(hosts, 2)),
                                                         TunedCollective::kAllReduce, TunedAlgorithm::kHostLeaders, 8);
    EXPECT_EQ(point.ran, "hostleaders") << hosts << " hosts";
    EXPECT_GT(point.network.messages, 0u) << hosts << " hosts";
    EXPECT_LE(point.network.messages, static_cast<uint64_t>(4 * hosts * 6)) << hosts << " hosts";
    EXPECT_LT(point.network.messages, static_cast<uint64_t>(hosts * (hosts - 1))) << hosts << " hosts";
  }
}

// The longest chain of messages each schedule waits through, counted by
// the simulator, against the steps the cost model (cost_model.cc) charges
// it: the model's step counts are the schedules' own.
TEST(SimulatorTest, StepsAreTheCostModelsSteps) {
  for (int p : {2, 3, 5, 8, 13, 16, 33, 64}) {
    const size_t bytes = 4 * static_cast<size_t>(p) * 8;  // every rank's block non-empty, one slot
    for (TunedAlgorithm a : {TunedAlgorithm::kRing, TunedAlgorithm::kHalvingDoubling}) {
      const SimulatedPoint point = simulate::simulatePoint(layoutOf({p}), TunedCollective::kAllReduce, a, bytes);
      EXPECT_EQ(point.steps, static_cast<uint32_t>(trafficOf(TunedCollective::kAllReduce, a, p, bytes).steps))
          << algorithmName(a) << " on " << p << " ranks";
    }
    for (TunedAlgorithm a : {TunedAlgorithm::kRing, TunedAlgorithm::kBruck}) {
      const SimulatedPoint point = simulate::simulatePoint(layoutOf({p}), TunedCollective::kAllGather, a, bytes);
      EXPECT_EQ(point.steps, static_cast<uint32_t>(trafficOf(TunedCollective::kAllGather, a, p, bytes).steps))
          << "AllGather " << algorithmName(a) << " on " << p << " ranks";
    }
    // A binomial Broadcast's chain to index v is v's set bits long (its
    // rounds, ceil(log2 P), also count a parent's sends to its other children).
    int deepest = 0;
    for (int v = 1; v < p; ++v) deepest = std::max(deepest, __builtin_popcount(static_cast<unsigned>(v)));
    const SimulatedPoint binomial =
        simulate::simulatePoint(layoutOf({p}), TunedCollective::kBroadcast, TunedAlgorithm::kBinomial, bytes);
    if (p >= 3) {
      EXPECT_EQ(binomial.steps, static_cast<uint32_t>(deepest)) << "binomial Broadcast on " << p << " ranks";
    }
  }
}

// Three ranks on two hosts, messages of 1000 bytes: the copy in, the
// sending host's link, its latency, the copy out, by hand.
TEST(SimulatorTest, TimelineAddsCopiesLinkTimeAndLatency) {
  mem::TimelineModel model;
  model.hostOf = {0, 1, 1};
  model.local = {0.5, 1000};  // 1000 B/us a rank's stream: 0.5 us per 1000 B copy
  model.network = {10, 100};  // 10 us per 1000 B on the link
  mem::Timeline timeline(model);
  const mem::Timeline::Stamp first = timeline.post(0, 1, 1000, 0);
  const double arrives = first.arrivesAtUs;
  EXPECT_DOUBLE_EQ(arrives, 0.5 + 10 + 10);
  EXPECT_EQ(first.step, 1u);
  // A second message from host 0, copied in by 1.0 us, queues behind the
  // first on its link (free at 10.5 us).
  EXPECT_DOUBLE_EQ(timeline.post(0, 2, 1000, 0).arrivesAtUs, 10.5 + 10 + 10);
  timeline.arrived(1, first);
  EXPECT_DOUBLE_EQ(timeline.released(1, 0, 1000), arrives + 0.5);
  // Within host 1: the copy and the local latency.
  // A message sent after taking one in is a step deeper.
  const mem::Timeline::Stamp relayed = timeline.post(1, 2, 1000, 0);
  EXPECT_DOUBLE_EQ(relayed.arrivesAtUs, arrives + 0.5 + 0.5 + 0.5);
  EXPECT_EQ(relayed.step, 2u);
  EXPECT_EQ(timeline.network().messages, 2u);
  EXPECT_EQ(timeline.local().messages, 1u);
  // A sender waits for a slot its receiver freed later than its clock.
  EXPECT_DOUBLE_EQ(timeline.post(2, 1, 0, 100).arrivesAtUs, 100 + 0.5);
  EXPECT_EQ(timeline.deepestStep(), 1u);  // rank 1 took one message in; rank 2 none yet
}

// A host's link is a calendar: a message posted later but due earlier
// takes a free stretch before those already booked, and one that does not
// fit a gap waits for the first that it fits.
TEST(SimulatorTest, TimelineBooksTheLinkByTimeNotByPostingOrder) {
  mem::LinkCalendar link;
  EXPECT_DOUBLE_EQ(link.reserve(100, 10), 110);  // [100, 110)
  EXPECT_DOUBLE_EQ(link.reserve(0, 10), 10);     // [0, 10), before it
  EXPECT_DOUBLE_EQ(link.reserve(5, 10), 20);     // [10, 20): after the first, in the gap
  EXPECT_DOUBLE_EQ(link.reserve(15, 85), 195);   // [20, 100) is 80 long: after [100, 110)
  EXPECT_DOUBLE_EQ(link.reserve(20, 80), 100);   // exactly the gap
  EXPECT_DOUBLE_EQ(link.reserve(0, 1), 196);     // the link is busy from 0 to 195 now
}

// Taking a message in costs its receiver the link's cost per message:
// a rank that 3 peers send to pays it 3 times.
TEST(SimulatorTest, TimelineChargesTheReceiverPerMessage) {
  mem::TimelineModel model;
  model.hostOf = {0, 1, 2, 3};
  model.local = {0.5, 1000, 0.05};
  model.network = {10, 100, 5};
  mem::Timeline timeline(model);
  for (int from = 1; from <= 3; ++from) {
    timeline.arrived(0, timeline.post(from, 0, 0, 0));
    timeline.released(0, from, 0);
  }
  EXPECT_DOUBLE_EQ(timeline.clockUs(0), 10 + 3 * 5);
}

Task<> everyRankReceivesFromTheNext(const Team& team, const CollectiveArgs& /*args*/, const WaitContext& wait) {
  co_await team.recvFrom((team.rank + 1) % team.nranks).acquire(wait, 4);
}

TEST(SimulatorTest, NamesWhatEveryRankWaitsForWhenNoneCanMove) {
  simulate::VirtualLayout layout;
  layout.hostOf = {0, 0, 0};
  simulate::VirtualRanks ranks(layout);
  float buffer[3][1];
  try {
    ranks.run(OperationKind::kBarrier, everyRankReceivesFromTheNext, [&](int r) {
      CollectiveArgs args;
      args.recvbuf = buffer[r];
      args.count = 1;
      args.dtype = loomFloat32;
      return args;
    });
    FAIL() << "a schedule that waits forever returned";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 waits for rank 1 to send data"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank 2 waits for rank 0"), std::string::npos) << e.what();
  }
  // Their connections are out of step now: another run refuses, saying why.
  try {
    ranks.run(OperationKind::kBarrier, everyRankReceivesFromTheNext, [&](int r) {
      CollectiveArgs args;
      args.recvbuf = buffer[r];
      return args;
    });
    FAIL() << "ranks that failed ran again";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a run before failed"), std::string::npos) << e.what();
  }
}

// All-pairs on 64 ranks puts 4032 messages in flight at once: under a
// limit of 1000 the simulation stops with a sentence, not an allocation
// the machine cannot make.
TEST(SimulatorTest, AScheduleTooLargeForItsBudgetStopsWithASentence) {
  SimulationLayout layout = layoutOf({64});
  layout.memoryBudget = 1000 * 4096;
  try {
    simulate::simulatePoint(layout, TunedCollective::kAllReduce, TunedAlgorithm::kAllPairs, 8);
    FAIL() << "4032 messages in flight fit a budget of 1000";
  } catch (const mem::BufferLimitReached& e) {
    EXPECT_NE(std::string(e.what()).find("more than 1000 messages would be in flight at once"), std::string::npos)
        << e.what();
  }
  // The ring holds two at a time: it runs in the same budget.
  EXPECT_EQ(simulate::simulatePoint(layout, TunedCollective::kAllReduce, TunedAlgorithm::kRing, 8).ran, "ring");
}

TEST(SimulatorTest, RanksThatCallDifferentCountsFailWithTheirLabels) {
  simulate::VirtualLayout layout;
  layout.hostOf = {0, 0};
  simulate::VirtualRanks ranks(layout);
  std::vector<float> send(8, 1.0f), recv(8);
  try {
    ranks.run(OperationKind::kAllReduce, allReduce, [&](int r) {
      CollectiveArgs args;
      args.sendbuf = send.data();
      args.recvbuf = recv.data();
      args.count = r == 0 ? 8 : 4;
      args.dtype = loomFloat32;
      return args;
    });
    FAIL() << "ranks that disagree on the count completed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("count"), std::string::npos) << e.what();
  }
}

}  // namespace simulator
}  // namespace loom::test

// Every collective schedule, as threads of this process over the in-memory
// transport with every message delayed by up to 50 us: on one host and on
// virtual hosts (even, interleaved and uneven layouts, for the
// hierarchical schedules), under each algorithm LOOM_ALGO can force, with
// and without single-copy transfers, at counts from one element to many
// slots, in place and out of place, against results computed here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "collectives/collectives.h"
#include "support/fabric_ranks.h"

namespace loom::test {
namespace {

struct Layout {
  const char* name;
  std::vector<int> hostOf;
};

struct Case {
  Layout layout;
  const char* algorithm;  // LOOM_ALGO's setting; "" lets Loom choose
  bool singleCopy;
};

std::string caseName(const testing::TestParamInfo<Case>& info) {
  std::string algorithm = *info.param.algorithm ? info.param.algorithm : "auto";
  algorithm[0] = static_cast<char>(std::toupper(algorithm[0]));
  for (char& c : algorithm)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';  // "allreduce:hierarchical"
  return std::string(info.param.layout.name) + "_" + algorithm + (info.param.singleCopy ? "_SingleCopy" : "");
}

bool evenHosts(const Layout& layout) {
  std::vector<int> perHost;
  for (int host : layout.hostOf) {
    if (host >= static_cast<int>(perHost.size())) perHost.resize(host + 1, 0);
    ++perHost[host];
  }
  return perHost.size() >= 2 && perHost[0] >= 2 &&
         std::all_of(perHost.begin(), perHost.end(), [&](int n) { return n == perHost[0]; });
}

std::vector<Case> allCases() {
  const std::vector<Layout> layouts = {
      {"OneHost2", {0, 0}},
      {"OneHost3", {0, 0, 0}},
      {"OneHost5", {0, 0, 0, 0, 0}},
      {"Hosts2x2", {0, 0, 1, 1}},
      {"Hosts2x2Interleaved", {0, 1, 0, 1}},
      {"Hosts2x3", {0, 0, 0, 1, 1, 1}},
      {"Hosts3x2", {0, 0, 1, 1, 2, 2}},
      {"Hosts1And2", {0, 1, 1}},
      {"Hosts3And1", {0, 0, 0, 1}},
      {"Hosts2And3And1Interleaved", {0, 1, 2, 0, 1, 1}},
  };
  std::vector<Case> cases;
  for (const Layout& layout : layouts) {
    cases.push_back({layout, "", true});
    cases.push_back({layout, "", false});
    cases.push_back({layout, "ring", false});
    cases.push_back({layout, "allpairs", false});
    cases.push_back({layout, "tree", false});
    cases.push_back({layout, "halvingdoubling", false});
    cases.push_back({layout, "dissemination", false});
    cases.push_back({layout, "bruck", false});
    cases.push_back({layout, "direct", true});
    if (evenHosts(layout))
      cases.push_back({layout, "hierarchical", false});
    else if (std::set<int>(layout.hostOf.begin(), layout.hostOf.end()).size() >= 2)
      cases.push_back({layout, "allreduce:hierarchical", false});  // AllReduce in steps on uneven hosts
  }
  return cases;
}

// Rank r's element i: small integers, so sums are exact in int32 and float.
int32_t input(int rank, size_t i) {
  return (rank + 1) * 1000 + static_cast<int32_t>(i % 997);
}
float floatInput(int rank, size_t i) {
  return static_cast<float>((i * 7 + static_cast<size_t>(rank) * 13) % 101);
}

// One slot is 4 KiB: from one element to many slots, odd counts included.
constexpr size_t kCounts[] = {1, 7, 1500, 9001};

class SchedulesTest : public testing::TestWithParam<Case> {
 protected:
  std::vector<std::unique_ptr<FabricRank>> ranks() const {
    FabricOptions options;
    options.nranks = static_cast<int>(GetParam().layout.hostOf.size());
    options.hostOf = GetParam().layout.hostOf;
    options.tuning.allowed = AlgorithmFilter::parse(GetParam().algorithm);
    options.faults.singleCopy = GetParam().singleCopy;
    options.faults.maxDelayMicros = 50;
    options.faults.seed = 11;
    return makeFabricRanks(options);
  }
};

loomResult_t runCollective(FabricRank& rank, const char* name, OperationKind kind, Operation::Step step,
                           const CollectiveArgs& args, std::string* error) {
  OperationPtr op = rank.collective(name, kind, step, args);
  std::shared_ptr<Request> request = requestOf(op);
  rank.engine().run(std::move(op));
  *error = request->error();
  return request->result();
}

#define RUN_ON(rank, name, kind, step, args)                                    \
  do {                                                                          \
    std::string error;                                                          \
    ASSERT_EQ(runCollective(rank, name, kind, step, args, &error), loomSuccess) \
        << name << " on rank " << rank.rank() << ": " << error;                 \
  } while (0)

TEST_P(SchedulesTest, AllReduceSumAndMaxInAndOutOfPlace) {
  auto all = ranks();
  const int n = static_cast<int>(all.size());
  onEveryRank(all, [&](FabricRank& rank) {
    for (size_t count : kCounts) {
      std::vector<int32_t> in(count), out(count, -1);
      std::vector<float> floats(count);
      for (size_t i = 0; i < count; ++i) in[i] = input(rank.rank(), i), floats[i] = floatInput(rank.rank(), i);
      RUN_ON(rank, "AllReduce", OperationKind::kAllReduce, allReduce,
             collectiveArgs(in.data(), out.data(), count, loomInt32, loomSum));
      RUN_ON(rank, "AllReduce", OperationKind::kAllReduce, allReduce,
             collectiveArgs(floats.data(), floats.data(), count, loomFloat32, loomMax));
      for (size_t i = 0; i < count; ++i) {
        int32_t sum = 0;
        float max = 0;
        for (int r = 0; r < n; ++r) sum += input(r, i), max = std::max(max, floatInput(r, i));
        ASSERT_EQ(out[i], sum) << "count " << count << " element " << i << " rank " << rank.rank();
        ASSERT_EQ(floats[i], max) << "in place, count " << count << " element " << i << " rank " << rank.rank();
      }
    }
  });
}

TEST_P(SchedulesTest, AllGatherAndReduceScatterInAndOutOfPlace) {
  auto all = ranks();
  const int n = static_cast<int>(all.size());
  onEveryRank(all, [&](FabricRank& rank) {
    const int me = rank.rank();
    for (size_t count : kCounts) {
      for (bool inPlace : {false, true}) {
        std::vector<int32_t> mine(count), gathered(count * n, -1);
        for (size_t i = 0; i < count; ++i) mine[i] = input(me, i);
        if (inPlace) std::copy(mine.begin(), mine.end(), gathered.begin() + me * count);
        RUN_ON(rank, "AllGather", OperationKind::kAllGather, allGather,
               collectiveArgs(inPlace ? gathered.data() + me * count : mine.data(), gathered.data(), count, loomInt32,
                              loomSum));
        for (int r = 0; r < n; ++r)
          for (size_t i = 0; i < count; ++i)
            ASSERT_EQ(gathered[r * count + i], input(r, i)) << "count " << count << " block " << r << " rank " << me;

        std::vector<int32_t> whole(count * n), block(count, -1);
        for (size_t i = 0; i < whole.size(); ++i) whole[i] = input(me, i);
        int32_t* result = inPlace ? whole.data() + me * count : block.data();
        RUN_ON(rank, "ReduceScatter", OperationKind::kReduceScatter, reduceScatter,
               collectiveArgs(whole.data(), result, count, loomInt32, loomSum));
        for (size_t i = 0; i < count; ++i) {
          int32_t sum = 0;
          for (int r = 0; r < n; ++r) sum += input(r, me * count + i);
          ASSERT_EQ(result[i], sum) << "count " << count << " element " << i << " rank " << me;
        }
      }
    }
  });
}

TEST_P(SchedulesTest, BroadcastAndReduceFromEveryRoot) {
  auto all = ranks();
  const int n = static_cast<int>(all.size());
  onEveryRank(all, [&](FabricRank& rank) {
    const int me = rank.rank();
    for (size_t count : kCounts) {
      for (int root = 0; root < n; ++root) {
        std::vector<int32_t> data(count, -1);
        if (me == root)
          for (size_t i = 0; i < count; ++i) data[i] = input(root, i);
        RUN_ON(rank, "Broadcast", OperationKind::kBroadcast, broadcast,
               collectiveArgs(data.data(), data.data(), count, loomInt32, loomSum, root));
        for (size_t i = 0; i < count; ++i) ASSERT_EQ(data[i], input(root, i)) << "root " << root << " rank " << me;

        std::vector<int32_t> in(count), out(count, -1);
        for (size_t i = 0; i < count; ++i) in[i] = input(me, i);
        RUN_ON(rank, "Reduce", OperationKind::kReduce, reduce,
               collectiveArgs(in.data(), out.data(), count, loomInt32, loomSum, root));
        if (me != root) continue;
        for (size_t i = 0; i < count; ++i) {
          int32_t sum = 0;
          for (int r = 0; r < n; ++r) sum += input(r, i);
          ASSERT_EQ(out[i], sum) << "root " << root << " element " << i;
        }
      }
    }
  });
}

TEST_P(SchedulesTest, AllToAllAndBarrier) {
  auto all = ranks();
  const int n = static_cast<int>(all.size());
  onEveryRank(all, [&](FabricRank& rank) {
    const int me = rank.rank();
    for (size_t count : kCounts) {
      std::vector<int32_t> out(count * n), in(count * n, -1);
      for (size_t i = 0; i < out.size(); ++i) out[i] = input(me, i);
      RUN_ON(rank, "AllToAll", OperationKind::kAllToAll, pairwiseAllToAll,
             collectiveArgs(out.data(), in.data(), count, loomInt32, loomSum));
      for (int from = 0; from < n; ++from)
        for (size_t i = 0; i < count; ++i)
          ASSERT_EQ(in[from * count + i], input(from, me * count + i)) << "from " << from << " rank " << me;
      std::string error;
      OperationPtr op = rank.custom("Barrier", Lane::collective(),
                                    [](const Team& team, const WaitContext& wait) { return barrier(team, wait); });
      std::shared_ptr<Request> request = requestOf(op);
      rank.engine().run(std::move(op));
      ASSERT_EQ(request->result(), loomSuccess) << request->error();
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Layouts, SchedulesTest, testing::ValuesIn(allCases()), caseName);

}  // namespace
}  // namespace loom::test

// The logarithmic AllReduce schedules (the double binary tree and
// recursive halving/doubling) at every rank count from 1 to 17 and at 24,
// 32 and 64, as threads over the in-memory transport: powers of two and
// the counts that fold ranks in, one element to many slots, a sample of
// dtypes and ops, in and out of place, every rank's result against sums
// computed here. Small counts travel with messages delayed so that
// connections overtake one another.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/collectives.h"
#include "support/fabric_ranks.h"

namespace loom::test {
// Named, as the unity build compiles this file with others of the folder.
namespace log_allreduce {

struct Case {
  bool tree;  // else halving/doubling
  int nranks;
};

std::string caseName(const testing::TestParamInfo<Case>& info) {
  return std::string(info.param.tree ? "DoubleTree" : "HalvingDoubling") + std::to_string(info.param.nranks);
}

std::vector<Case> allCases() {
  std::vector<Case> cases;
  for (bool tree : {true, false})
    for (int n : logScheduleRankCounts()) cases.push_back({tree, n});
  return cases;
}

// Small integers, so that sums are exact in every dtype used here.
int64_t value(int rank, size_t i) {
  return static_cast<int64_t>((i * 7 + static_cast<size_t>(rank) * 13) % 101) - 50;
}

// One slot is 4 KiB: one element, odd counts below a slot and across
// several, and a count smaller than the number of ranks' blocks.
constexpr size_t kCounts[] = {1, 3, 7, 1001, 9001};

class AllReduceAlgorithmsTest : public testing::TestWithParam<Case> {
 protected:
  std::vector<std::unique_ptr<FabricRank>> ranks() const {
    FabricOptions options;
    options.nranks = GetParam().nranks;
    options.tuning.allowed = AlgorithmFilter::parse(GetParam().tree ? "tree" : "halvingdoubling");
    options.faults.maxDelayMicros = GetParam().nranks <= 17 ? 30 : 0;
    options.faults.seed = 5;
    options.timeoutMs = 120000;
    return makeFabricRanks(options);
  }
};

loomResult_t allReduceOn(FabricRank& rank, const void* send, void* recv, size_t count, loomDataType_t dtype,
                         loomRedOp_t op, std::string* error) {
  OperationPtr operation =
      rank.collective("AllReduce", OperationKind::kAllReduce, allReduce, collectiveArgs(send, recv, count, dtype, op));
  std::shared_ptr<Request> request = requestOf(operation);
  rank.engine().run(std::move(operation));
  *error = request->error();
  return request->result();
}

#define ALLREDUCE_ON(rank, send, recv, count, dtype, op)                                      \
  do {                                                                                        \
    std::string error;                                                                        \
    ASSERT_EQ(allReduceOn(rank, send, recv, count, dtype, op, &error), loomSuccess) << error; \
  } while (0)

TEST_P(AllReduceAlgorithmsTest, EveryRankGetsTheExactResult) {
  auto all = ranks();
  const int n = GetParam().nranks;
  onEveryRank(all, [&](FabricRank& rank) {
    const int me = rank.rank();
    for (size_t count : kCounts) {
      // int32 sum, out of place.
      std::vector<int32_t> ints(count), intSums(count, -1);
      for (size_t i = 0; i < count; ++i) ints[i] = static_cast<int32_t>(value(me, i));
      ALLREDUCE_ON(rank, ints.data(), intSums.data(), count, loomInt32, loomSum);
      // float max, in place.
      std::vector<float> maxima(count);
      for (size_t i = 0; i < count; ++i) maxima[i] = static_cast<float>(value(me, i));
      ALLREDUCE_ON(rank, maxima.data(), maxima.data(), count, loomFloat32, loomMax);
      // float avg, out of place.
      std::vector<float> floats(count), averages(count, -1);
      for (size_t i = 0; i < count; ++i) floats[i] = static_cast<float>(value(me, i));
      ALLREDUCE_ON(rank, floats.data(), averages.data(), count, loomFloat32, loomAvg);
      // int64 min, in place.
      std::vector<int64_t> minima(count);
      for (size_t i = 0; i < count; ++i) minima[i] = value(me, i) * int64_t{1000000007};
      ALLREDUCE_ON(rank, minima.data(), minima.data(), count, loomInt64, loomMin);
      // uint8 prod, out of place: wraps modulo 256 in any order alike.
      std::vector<uint8_t> bytes(count), products(count, 0);
      for (size_t i = 0; i < count; ++i) bytes[i] = static_cast<uint8_t>(value(me, i) * 2 + 1);
      ALLREDUCE_ON(rank, bytes.data(), products.data(), count, loomUint8, loomProd);

      for (size_t i = 0; i < count; ++i) {
        int64_t sum = 0, max = INT64_MIN, min = INT64_MAX;
        uint8_t product = 1;
        for (int r = 0; r < n; ++r) {
          sum += value(r, i);
          max = std::max(max, value(r, i));
          min = std::min(min, value(r, i) * int64_t{1000000007});
          product = static_cast<uint8_t>(product * static_cast<uint8_t>(value(r, i) * 2 + 1));
        }
        const std::string where =
            "count " + std::to_string(count) + " element " + std::to_string(i) + " rank " + std::to_string(me);
        ASSERT_EQ(intSums[i], sum) << "int32 sum, " << where;
        ASSERT_EQ(maxima[i], static_cast<float>(max)) << "float max in place, " << where;
        ASSERT_EQ(averages[i], static_cast<float>(sum) / static_cast<float>(n)) << "float avg, " << where;
        ASSERT_EQ(minima[i], min) << "int64 min in place, " << where;
        ASSERT_EQ(products[i], product) << "uint8 prod, " << where;
      }
      // The inputs of the out-of-place calls are left as they were.
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(ints[i], value(me, i)) << "input changed, " << i;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, AllReduceAlgorithmsTest, testing::ValuesIn(allCases()), caseName);

}  // namespace log_allreduce
}  // namespace loom::test

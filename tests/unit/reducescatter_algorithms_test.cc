// Recursive-halving ReduceScatter at every rank count from 1 to 17 and at
// 24, 32 and 64, as threads over the in-memory transport: powers of two and
// the counts that fold ranks in, one element to many slots per block, a
// sample of dtypes and ops, in and out of place, every rank's block
// against sums computed here, on a ring order unlike rank order. Up to 17 ranks messages travel delayed, so
// that connections overtake one another.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/collectives.h"
#include "support/fabric_ranks.h"

namespace loom::test {
// Named, as the unity build compiles this file with others of the folder.
namespace log_reducescatter {

std::string caseName(const testing::TestParamInfo<int>& info) {
  return "HalvingDoubling" + std::to_string(info.param);
}

// Small integers, so that sums are exact in every dtype used here; element
// i of the whole input (every rank's block in turn).
int64_t value(int rank, size_t i) {
  return static_cast<int64_t>((i * 7 + static_cast<size_t>(rank) * 13) % 101) - 50;
}

// Each rank's block: one element, odd counts below a slot (4 KiB) and
// across several.
constexpr size_t kCounts[] = {1, 3, 7, 1001, 2049};

class ReduceScatterAlgorithmsTest : public testing::TestWithParam<int> {
 protected:
  std::vector<std::unique_ptr<FabricRank>> ranks() const {
    FabricOptions options;
    options.nranks = GetParam();
    options.tuning.allowed = AlgorithmFilter::parse("reducescatter:halvingdoubling");
    options.ring = evensThenOdds(GetParam());
    options.faults.maxDelayMicros = GetParam() <= 17 ? 30 : 0;
    options.faults.seed = 13;
    options.timeoutMs = 120000;
    return makeFabricRanks(options);
  }
};

loomResult_t reduceScatterOn(FabricRank& rank, const void* send, void* recv, size_t count, loomDataType_t dtype,
                             loomRedOp_t op, std::string* error) {
  OperationPtr operation = rank.collective("ReduceScatter", OperationKind::kReduceScatter, reduceScatter,
                                           collectiveArgs(send, recv, count, dtype, op));
  std::shared_ptr<Request> request = requestOf(operation);
  rank.engine().run(std::move(operation));
  *error = request->error();
  return request->result();
}

#define REDUCESCATTER_ON(rank, send, recv, count, dtype, op)                                      \
  do {                                                                                            \
    std::string error;                                                                            \
    ASSERT_EQ(reduceScatterOn(rank, send, recv, count, dtype, op, &error), loomSuccess) << error; \
  } while (0)

TEST_P(ReduceScatterAlgorithmsTest, EveryRankGetsItsBlockReduced) {
  auto all = ranks();
  const int n = GetParam();
  onEveryRank(all, [&](FabricRank& rank) {
    const int me = rank.rank();
    for (size_t count : kCounts) {
      const size_t total = count * static_cast<size_t>(n);
      const size_t mine = static_cast<size_t>(me) * count;  // this rank's block in the whole
      // int32 sum, out of place.
      std::vector<int32_t> ints(total), intSums(count, -1);
      for (size_t i = 0; i < total; ++i) ints[i] = static_cast<int32_t>(value(me, i));
      REDUCESCATTER_ON(rank, ints.data(), intSums.data(), count, loomInt32, loomSum);
      // float max, in place: the result lands on this rank's block of the input.
      std::vector<float> maxima(total);
      for (size_t i = 0; i < total; ++i) maxima[i] = static_cast<float>(value(me, i));
      REDUCESCATTER_ON(rank, maxima.data(), maxima.data() + mine, count, loomFloat32, loomMax);
      // float avg, out of place.
      std::vector<float> floats(total), averages(count, -1);
      for (size_t i = 0; i < total; ++i) floats[i] = static_cast<float>(value(me, i));
      REDUCESCATTER_ON(rank, floats.data(), averages.data(), count, loomFloat32, loomAvg);
      // int64 min, in place.
      std::vector<int64_t> minima(total);
      for (size_t i = 0; i < total; ++i) minima[i] = value(me, i) * int64_t{1000000007};
      REDUCESCATTER_ON(rank, minima.data(), minima.data() + mine, count, loomInt64, loomMin);
      // uint8 prod, out of place: wraps modulo 256 in any order alike.
      std::vector<uint8_t> bytes(total), products(count, 0);
      for (size_t i = 0; i < total; ++i) bytes[i] = static_cast<uint8_t>(value(me, i) * 2 + 1);
      REDUCESCATTER_ON(rank, bytes.data(), products.data(), count, loomUint8, loomProd);

      for (size_t i = 0; i < count; ++i) {
        const size_t at = mine + i;
        int64_t sum = 0, max = INT64_MIN, min = INT64_MAX;
        uint8_t product = 1;
        for (int r = 0; r < n; ++r) {
          sum += value(r, at);
          max = std::max(max, value(r, at));
          min = std::min(min, value(r, at) * int64_t{1000000007});
          product = static_cast<uint8_t>(product * static_cast<uint8_t>(value(r, at) * 2 + 1));
        }
        const std::string where =
            "count " + std::to_string(count) + " element " + std::to_string(i) + " rank " + std::to_string(me);
        ASSERT_EQ(intSums[i], sum) << "int32 sum, " << where;
        ASSERT_EQ(maxima[at], static_cast<float>(max)) << "float max in place, " << where;
        ASSERT_EQ(averages[i], static_cast<float>(sum) / static_cast<float>(n)) << "float avg, " << where;
        ASSERT_EQ(minima[at], min) << "int64 min in place, " << where;
        ASSERT_EQ(products[i], product) << "uint8 prod, " << where;
      }
      // The input of an out-of-place call is left as it was.
      for (size_t i = 0; i < total; ++i) ASSERT_EQ(ints[i], value(me, i)) << "input changed, " << i;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, ReduceScatterAlgorithmsTest, testing::ValuesIn(logScheduleRankCounts()), caseName);

}  // namespace log_reducescatter
}  // namespace loom::test

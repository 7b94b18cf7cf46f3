// Bruck's and recursive doubling's AllGather at every rank count from 1 to
// 17 and at 24, 32 and 64,
// as threads over the in-memory transport: powers of two and the counts in
// between, where the last step sends fewer blocks than the one before; one
// element to many slots; a sample of dtypes, in and out of place; every
// rank's output against the blocks computed here, on a ring order unlike
// rank order. Up to 17 ranks messages
// travel delayed, so that connections overtake one another.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "collectives/collectives.h"
#include "support/fabric_ranks.h"

namespace loom::test {
// Named, as the unity build compiles this file with others of the folder.
namespace log_allgather {

// The algorithm's LOOM_ALGO name, and the rank count.
using Case = std::tuple<std::string, int>;

std::string caseName(const testing::TestParamInfo<Case>& info) {
  const std::string algorithm = std::get<0>(info.param);
  return (algorithm == "bruck" ? "Bruck" : "HalvingDoubling") + std::to_string(std::get<1>(info.param));
}

// Rank r's element i, distinct across ranks and positions.
int64_t value(int rank, size_t i) {
  return static_cast<int64_t>(rank) * 1000003 + static_cast<int64_t>(i) * 7 - 500;
}

// One slot is 4 KiB: one element, odd counts below a slot, and blocks of
// several slots (a step's blocks then span many chunks).
constexpr size_t kCounts[] = {1, 3, 7, 1001, 2049};

class AllGatherAlgorithmsTest : public testing::TestWithParam<Case> {
 protected:
  int nranks() const { return std::get<1>(GetParam()); }
  std::vector<std::unique_ptr<FabricRank>> ranks() const {
    FabricOptions options;
    options.nranks = nranks();
    options.tuning.allowed = AlgorithmFilter::parse("allgather:" + std::get<0>(GetParam()));
    options.ring = evensThenOdds(nranks());
    options.faults.maxDelayMicros = nranks() <= 17 ? 30 : 0;
    options.faults.seed = 9;
    options.timeoutMs = 120000;
    return makeFabricRanks(options);
  }
};

loomResult_t allGatherOn(FabricRank& rank, const void* send, void* recv, size_t count, loomDataType_t dtype,
                         std::string* error) {
  OperationPtr operation = rank.collective("AllGather", OperationKind::kAllGather, allGather,
                                           collectiveArgs(send, recv, count, dtype, loomSum));
  std::shared_ptr<Request> request = requestOf(operation);
  rank.engine().run(std::move(operation));
  *error = request->error();
  return request->result();
}

#define ALLGATHER_ON(rank, send, recv, count, dtype)                                      \
  do {                                                                                    \
    std::string error;                                                                    \
    ASSERT_EQ(allGatherOn(rank, send, recv, count, dtype, &error), loomSuccess) << error; \
  } while (0)

TEST_P(AllGatherAlgorithmsTest, EveryRankGetsEveryBlockInRankOrder) {
  auto all = ranks();
  const int n = nranks();
  onEveryRank(all, [&](FabricRank& rank) {
    const int me = rank.rank();
    for (size_t count : kCounts) {
      const size_t total = count * static_cast<size_t>(n);
      // int64, out of place.
      std::vector<int64_t> mine(count), longs(total, -1);
      for (size_t i = 0; i < count; ++i) mine[i] = value(me, i);
      ALLGATHER_ON(rank, mine.data(), longs.data(), count, loomInt64);
      // int32, in place: this rank's block sits at its place in the output.
      std::vector<int32_t> ints(total, -1);
      for (size_t i = 0; i < count; ++i) ints[me * count + i] = static_cast<int32_t>(value(me, i));
      ALLGATHER_ON(rank, ints.data() + me * count, ints.data(), count, loomInt32);
      // uint8, out of place: an element size below the slot's alignment.
      std::vector<uint8_t> bytes(count), gathered(total, 0);
      for (size_t i = 0; i < count; ++i) bytes[i] = static_cast<uint8_t>(value(me, i));
      ALLGATHER_ON(rank, bytes.data(), gathered.data(), count, loomUint8);

      for (int r = 0; r < n; ++r) {
        for (size_t i = 0; i < count; ++i) {
          const size_t at = static_cast<size_t>(r) * count + i;
          const std::string where = "count " + std::to_string(count) + ", block of rank " + std::to_string(r) +
                                    " element " + std::to_string(i) + ", on rank " + std::to_string(me);
          ASSERT_EQ(longs[at], value(r, i)) << "int64, " << where;
          ASSERT_EQ(ints[at], static_cast<int32_t>(value(r, i))) << "int32 in place, " << where;
          ASSERT_EQ(gathered[at], static_cast<uint8_t>(value(r, i))) << "uint8, " << where;
        }
      }
      for (size_t i = 0; i < count; ++i) ASSERT_EQ(mine[i], value(me, i)) << "input changed, " << i;
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, AllGatherAlgorithmsTest,
                         testing::Combine(testing::Values("bruck", "halvingdoubling"),
                                          testing::ValuesIn(logScheduleRankCounts())),
                         caseName);

}  // namespace log_allgather
}  // namespace loom::test

#include "base/rank_list.h"

#include <gtest/gtest.h>

namespace loom {
namespace {

TEST(RankListTest, NamesOneRankAlone) {
  EXPECT_EQ(describeRanks({}), "no rank");
  EXPECT_EQ(describeRanks({2}), "rank 2");
  EXPECT_EQ(describeRanks({2, 2}), "rank 2");
}

TEST(RankListTest, JoinsTheLastTwoWithAnd) {
  EXPECT_EQ(describeRanks({1, 0}), "ranks 0 and 1");
  EXPECT_EQ(describeRanks({7, 3, 5}), "ranks 3, 5 and 7");
}

TEST(RankListTest, CollapsesRunsOfThreeOrMore) {
  EXPECT_EQ(describeRanks({0, 1, 2}), "ranks 0-2");
  EXPECT_EQ(describeRanks({0, 1, 2, 3, 5, 7, 8}), "ranks 0-3, 5, 7 and 8");
  std::vector<int> many;
  for (int r = 0; r < 4096; ++r)
    if (r != 1000) many.push_back(r);
  EXPECT_EQ(describeRanks(many), "ranks 0-999 and 1001-4095");
}

}  // namespace
}  // namespace loom

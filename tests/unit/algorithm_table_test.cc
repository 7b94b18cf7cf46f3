// LOOM_ALGO against the algorithm table: NCCL_ALGO's syntax (a list for
// every collective, "^" for all but, "collective:list" entries), every
// name from the table, and a sentence for each kind of bad setting.
#include "collectives/algorithm_table.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace loom {
// Named, as the unity build compiles this file with others of the folder.
namespace algorithm_table_test {

using C = TunedCollective;
using A = TunedAlgorithm;

std::string refusal(const std::string& setting) {
  try {
    AlgorithmFilter::parse(setting);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "'" << setting << "' was accepted";
  return {};
}

TEST(AlgorithmTableTest, EveryRowHasItsOwnNameAndServesSomething) {
  for (int a = 0; a < kTunedAlgorithms; ++a) {
    const AlgorithmRow& row = algorithmRow(static_cast<A>(a));
    EXPECT_EQ(static_cast<int>(row.id), a);
    EXPECT_NE(row.collectives, 0u) << row.name;
    for (int b = 0; b < a; ++b) EXPECT_STRNE(row.name, algorithmName(static_cast<A>(b)));
  }
  EXPECT_STREQ(collectiveName(C::kReduceScatter), "ReduceScatter");
  EXPECT_TRUE(algorithmRow(A::kDissemination).serves(C::kBarrier));
  EXPECT_FALSE(algorithmRow(A::kDissemination).serves(C::kAllReduce));
}

TEST(AlgorithmTableTest, UnsetOrEmptyAllowsEverythingAndRestrictsNothing) {
  for (const char* setting : {"", "  "}) {
    const AlgorithmFilter filter = AlgorithmFilter::parse(setting);
    for (int c = 0; c < kTunedCollectives; ++c) {
      EXPECT_FALSE(filter.restricted(static_cast<C>(c)));
      for (int a = 0; a < kTunedAlgorithms; ++a) EXPECT_TRUE(filter.allows(static_cast<C>(c), static_cast<A>(a)));
    }
  }
}

TEST(AlgorithmTableTest, AListForEveryCollectiveLimitsOnlyThoseItServes) {
  const AlgorithmFilter tree = AlgorithmFilter::parse("tree");
  EXPECT_TRUE(tree.onlyAllows(C::kAllReduce, A::kTree));
  EXPECT_TRUE(tree.onlyAllows(C::kBroadcast, A::kTree));
  EXPECT_TRUE(tree.onlyAllows(C::kReduce, A::kTree));
  // No tree AllGather: it keeps the automatic choice.
  EXPECT_FALSE(tree.restricted(C::kAllGather));
  EXPECT_TRUE(tree.allows(C::kAllGather, A::kRing));

  const AlgorithmFilter ring = AlgorithmFilter::parse("Ring");  // any case
  for (int c = 0; c < kTunedCollectives; ++c) EXPECT_TRUE(ring.onlyAllows(static_cast<C>(c), A::kRing)) << c;

  const AlgorithmFilter two = AlgorithmFilter::parse("halvingdoubling, ring");
  EXPECT_TRUE(two.allows(C::kAllReduce, A::kHalvingDoubling));
  EXPECT_TRUE(two.allows(C::kAllReduce, A::kRing));
  EXPECT_FALSE(two.allows(C::kAllReduce, A::kAllPairs));
  EXPECT_FALSE(two.onlyAllows(C::kAllReduce, A::kRing));
  EXPECT_FALSE(two.onlyAllows(C::kAllGather, A::kRing));  // halving/doubling serves AllGather too
  EXPECT_TRUE(two.allows(C::kAllGather, A::kHalvingDoubling));
  EXPECT_FALSE(two.allows(C::kAllGather, A::kBruck));
  EXPECT_TRUE(two.onlyAllows(C::kBroadcast, A::kRing));
}

TEST(AlgorithmTableTest, ACaretAllowsAllButTheNamed) {
  const AlgorithmFilter filter = AlgorithmFilter::parse("^tree,allpairs");
  EXPECT_FALSE(filter.allows(C::kAllReduce, A::kTree));
  EXPECT_FALSE(filter.allows(C::kAllReduce, A::kAllPairs));
  EXPECT_TRUE(filter.allows(C::kAllReduce, A::kRing));
  EXPECT_TRUE(filter.allows(C::kAllReduce, A::kHalvingDoubling));
  EXPECT_FALSE(filter.allows(C::kBroadcast, A::kTree));
  EXPECT_TRUE(filter.allows(C::kBroadcast, A::kRing));
  EXPECT_TRUE(filter.allows(C::kBroadcast, A::kBinomial));
  EXPECT_FALSE(filter.allows(C::kBarrier, A::kAllPairs));
  EXPECT_TRUE(filter.allows(C::kBarrier, A::kRing));
  EXPECT_TRUE(filter.allows(C::kBarrier, A::kDissemination));
  // Nothing AllGather runs was excluded: not restricted.
  EXPECT_FALSE(filter.restricted(C::kAllGather));
}

TEST(AlgorithmTableTest, EntriesPerCollectiveOverrideTheFirst) {
  const AlgorithmFilter filter = AlgorithmFilter::parse("ring;allreduce:tree,halvingdoubling;BROADCAST:^ring,binomial");
  EXPECT_TRUE(filter.allows(C::kAllReduce, A::kTree));
  EXPECT_TRUE(filter.allows(C::kAllReduce, A::kHalvingDoubling));
  EXPECT_FALSE(filter.allows(C::kAllReduce, A::kRing));
  EXPECT_TRUE(filter.onlyAllows(C::kBroadcast, A::kTree));
  EXPECT_TRUE(filter.onlyAllows(C::kReduce, A::kRing));
  EXPECT_TRUE(filter.onlyAllows(C::kAllGather, A::kRing));
  EXPECT_EQ(filter.anyLeftOnly(A::kTree), C::kBroadcast);
  EXPECT_EQ(filter.anyLeftOnly(A::kDirect), C::kCount);

  const AlgorithmFilter alone = AlgorithmFilter::parse("allgather:direct");
  EXPECT_EQ(alone.anyLeftOnly(A::kDirect), C::kAllGather);
  EXPECT_FALSE(alone.restricted(C::kAllReduce));
}

// Ranks compare what a setting means, not how it was spelt.
TEST(AlgorithmTableTest, TheCanonicalFormSaysWhatTheSettingMeans) {
  EXPECT_EQ(AlgorithmFilter::parse("").canonical(), "auto");
  EXPECT_EQ(AlgorithmFilter::parse("Tree").canonical(),
            AlgorithmFilter::parse("allreduce:tree;broadcast:TREE;reduce:tree").canonical());
  EXPECT_EQ(AlgorithmFilter::parse("Tree").canonical(), "allreduce:tree;broadcast:tree;reduce:tree");
  EXPECT_EQ(AlgorithmFilter::parse("allgather:bruck,ring").canonical(), "allgather:ring,bruck");
  EXPECT_EQ(AlgorithmFilter::parse("^bruck").canonical(),
            "allgather:ring,halvingdoubling,direct,registered,hierarchical,hostleaders");
  EXPECT_NE(AlgorithmFilter::parse("^bruck").canonical(), AlgorithmFilter::parse("^tree").canonical());
  // Every canonical form reads back as itself.
  for (const char* setting : {"ring", "^ring,allpairs", "allreduce:halvingdoubling;barrier:dissemination", "direct"}) {
    const std::string once = AlgorithmFilter::parse(setting).canonical();
    EXPECT_EQ(AlgorithmFilter::parse(once).canonical(), once) << setting;
  }
}

TEST(AlgorithmTableTest, BadSettingsAreRefusedSayingWhatAndTheChoices) {
  EXPECT_NE(refusal("fast").find("LOOM_ALGO='fast': 'fast' is not an algorithm; the algorithms are allpairs, ring, "
                                 "tree, halvingdoubling, bruck, direct, registered, hierarchical, hostleaders"),
            std::string::npos);
  EXPECT_NE(refusal("allreduce:tree;gather:ring")
                .find("'gather' is not a collective; the collectives are AllReduce, "
                      "AllGather, ReduceScatter, Broadcast, Reduce, Barrier"),
            std::string::npos);
  EXPECT_NE(refusal("allreduce:tree;ring").find("'ring' names no collective; every entry after the first needs one"),
            std::string::npos);
  EXPECT_NE(refusal("allgather:tree")
                .find("AllGather would have no algorithm left; AllGather runs with ring, "
                      "halvingdoubling, bruck, direct, registered, hierarchical, hostleaders"),
            std::string::npos);
  EXPECT_NE(refusal("barrier:^allpairs,ring,dissemination").find("Barrier would have no algorithm left"),
            std::string::npos);
  EXPECT_NE(refusal("ring;;allreduce:tree").find("entry 2 is empty"), std::string::npos);
  EXPECT_NE(refusal("allreduce:").find("'allreduce:' names no algorithm"), std::string::npos);
  EXPECT_NE(refusal("^").find("names no algorithm"), std::string::npos);
  EXPECT_NE(refusal("ring,,tree").find("'' is not an algorithm"), std::string::npos);
  // Every refusal says how the setting is written.
  EXPECT_NE(refusal("tree:ring").find("NCCL_ALGO's syntax"), std::string::npos);
}

}  // namespace algorithm_table_test
}  // namespace loom

// The links' rates the cost model's network follows: what the kernel gives
// for interfaces without a speed or that do not exist (a rate of none,
// never a throw), the slowest of the ranks' links, which every rank reads
// alike, and what TCP moves over a link of a rate. tests/multihost/network_rate_test.sh reads a shaped link's.
#include "bootstrap/link_rate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/cost_model.h"
#include "transport/tcp/tcp_setup.h"

namespace loom::test {
namespace {

TEST(LinkRate, LoopbackHasNoSpeedAndSaysSo) {
  const bootstrap::LinkRate rate = bootstrap::linkRateOf("lo");
  EXPECT_EQ(rate.mbps, 0);
  EXPECT_EQ(rate.source, "no speed (the kernel gives none for lo)");
}

TEST(LinkRate, AnInterfaceThatIsNotThereHasNoRate) {
  for (const char* name : {"no-such-nic0", "", "a-name-longer-than-ifnamsiz-allows"}) {
    const bootstrap::LinkRate rate = bootstrap::linkRateOf(name);
    EXPECT_EQ(rate.mbps, 0) << name;
    std::string expected = "no speed (the kernel gives none for ";
    expected.append(name).append(")");
    EXPECT_EQ(rate.source, expected);
  }
}

TEST(SlowestLink, TheSlowestRateAndItsRank) {
  const NetworkRate rate = tcp::slowestLink({25000, 10000, 100000});
  EXPECT_EQ(rate.mbps, 10000);
  EXPECT_EQ(rate.rank, 1);
  EXPECT_EQ(rate.unknownRank, -1);
  EXPECT_TRUE(rate.any());
  // Ties: the first rank with it.
  EXPECT_EQ(tcp::slowestLink({2000, 2000}).rank, 0);
  // Ranks without TCP peers (-1) have no say.
  EXPECT_EQ(tcp::slowestLink({-1, 40000, -1, 10000}).rank, 3);
}

TEST(SlowestLink, RanksWithoutARateAreNamedBesideTheSlowestKnown) {
  const NetworkRate rate = tcp::slowestLink({10000, 0, 5000, 0});
  EXPECT_EQ(rate.mbps, 5000);
  EXPECT_EQ(rate.rank, 2);
  EXPECT_EQ(rate.unknownRank, 1);
  const NetworkRate none = tcp::slowestLink({0, -1, 0});
  EXPECT_EQ(none.mbps, 0);
  EXPECT_EQ(none.rank, -1);
  EXPECT_EQ(none.unknownRank, 0);
  EXPECT_TRUE(none.any());
}

TEST(SlowestLink, NoRankWithTcpPeersIsNoNetwork) {
  EXPECT_FALSE(tcp::slowestLink({-1, -1}).any());
  EXPECT_FALSE(tcp::slowestLink({}).any());
}

// TCP's share of a link's rate: the built-in network's of the 10 Gbit/s it
// describes, so a 10 Gbit/s link moves the built-in bandwidth.
TEST(NetworkBandwidth, TcpMovesTheBuiltInShareOfTheLinksRate) {
  EXPECT_DOUBLE_EQ(networkBytesPerUsAt(10000), defaultCosts().network.bytesPerUs);
  EXPECT_DOUBLE_EQ(networkBytesPerUsAt(1000), defaultCosts().network.bytesPerUs / 10);
  EXPECT_DOUBLE_EQ(networkBytesPerUsAt(100000), defaultCosts().network.bytesPerUs * 10);
}

}  // namespace
}  // namespace loom::test

// The links' rates the cost model's network follows: what the kernel gives
// for interfaces without a speed or that do not exist (a rate of none,
// never a throw), and the slowest of the ranks' links, which every rank
// reads alike. tests/multihost/network_rate_test.sh reads a shaped link's.
#include "bootstrap/link_rate.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

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

TEST(SlowestLink, TheSlowestKnownRateAndItsRank) {
  EXPECT_EQ(tcp::slowestLink({25000, 10000, 100000}).mbps, 10000);
  EXPECT_EQ(tcp::slowestLink({25000, 10000, 100000}).rank, 1);
  // Ties: the first rank with it.
  EXPECT_EQ(tcp::slowestLink({2000, 2000}).rank, 0);
  // Ranks without TCP peers (-1) have no say.
  EXPECT_EQ(tcp::slowestLink({-1, 40000, -1, 10000}).rank, 3);
}

TEST(SlowestLink, AnyUnknownRateMakesItUnknown) {
  // A link whose rate the kernel does not give may be the slowest.
  const NetworkRate unknown = tcp::slowestLink({10000, 0, 5000, 0});
  EXPECT_EQ(unknown.mbps, 0);
  EXPECT_EQ(unknown.rank, 1);
  EXPECT_EQ(tcp::slowestLink({0, 10000}).rank, 0);
}

TEST(SlowestLink, NoRankWithTcpPeersIsNoNetwork) {
  EXPECT_EQ(tcp::slowestLink({-1, -1}).rank, -1);
  EXPECT_EQ(tcp::slowestLink({}).rank, -1);
}

}  // namespace
}  // namespace loom::test

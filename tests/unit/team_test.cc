// Teams map their indices to communicator ranks and keep every member's
// place, so sub-teams (this host's ranks; this local index on every host)
// can run any algorithm. These check the mapping without connections.
#include "collectives/team.h"

#include <gtest/gtest.h>

#include <vector>

#include "base/error.h"
#include "collectives/hierarchical.h"

namespace loom {
namespace {

// Six ranks on three hosts, two per host, numbered by host: 0 1 | 2 3 | 4 5;
// the ring visits them in the order given.
Team sixRanksOnThreeHosts(int rank, const std::vector<int>& ring) {
  Team team;
  team.rank = rank;
  team.nranks = 6;
  for (int r = 0; r < 6; ++r) {
    team.members.push_back(r);
    team.places.push_back(MemberPlace{r / 2, r % 2, 0, 0});
  }
  team.ring = ring;
  for (int p = 0; p < 6; ++p)
    if (ring[p] == rank) team.ringPosition = p;
  return team;
}

TEST(TeamTest, HostTeamHoldsTheRanksOfThisHost) {
  Team world = sixRanksOnThreeHosts(3, {0, 1, 2, 3, 4, 5});
  Team host = world.hostTeam();
  EXPECT_EQ(host.nranks, 2);
  EXPECT_EQ(host.members, (std::vector<int>{2, 3}));
  EXPECT_EQ(host.rank, 1);
  EXPECT_EQ(host.peerOf(0), 2);
  EXPECT_EQ(host.ring, (std::vector<int>{0, 1}));
  EXPECT_EQ(host.ringPosition, 1);
  EXPECT_EQ(host.ringRank(host.ringPosition + 1), 0);
}

TEST(TeamTest, LocalIndexTeamHoldsOneRankPerHost) {
  Team world = sixRanksOnThreeHosts(3, {0, 1, 2, 3, 4, 5});
  Team across = world.localIndexTeam();
  EXPECT_EQ(across.members, (std::vector<int>{1, 3, 5}));
  EXPECT_EQ(across.rank, 1);
  for (const MemberPlace& place : across.places) EXPECT_EQ(place.localIndex, 1);
  EXPECT_EQ(across.places[2].host, 2);
}

TEST(TeamTest, SubTeamFollowsTheParentRingOrder) {
  // The parent ring goes 0 2 4 1 3 5; the even ranks keep 0 2 4 in that order,
  // numbered as given (4, 0, 2 -> indices 0, 1, 2).
  Team world = sixRanksOnThreeHosts(2, {0, 2, 4, 1, 3, 5});
  Team evens = world.subTeam({4, 0, 2});
  EXPECT_EQ(evens.members, (std::vector<int>{4, 0, 2}));
  EXPECT_EQ(evens.rank, 2);
  EXPECT_EQ(evens.ring, (std::vector<int>{1, 2, 0}));  // ranks 0, 2, 4 as indices
  EXPECT_EQ(evens.ringPosition, 1);
  EXPECT_EQ(evens.peerOf(evens.ringRank(evens.ringPosition + 1)), 4);
  EXPECT_EQ(evens.peerOf(evens.ringRank(evens.ringPosition - 1)), 0);
  EXPECT_EQ(evens.hopsFrom(1), 1);  // from rank 0 (index 1) forward to rank 2
}

TEST(TeamTest, SubTeamOfASubTeamMapsToCommunicatorRanks) {
  Team world = sixRanksOnThreeHosts(5, {0, 1, 2, 3, 4, 5});
  Team across = world.localIndexTeam();   // ranks 1, 3, 5
  Team lastTwo = across.subTeam({1, 2});  // ranks 3, 5
  EXPECT_EQ(lastTwo.members, (std::vector<int>{3, 5}));
  EXPECT_EQ(lastTwo.rank, 1);
  EXPECT_EQ(lastTwo.places[0].host, 1);
}

TEST(TeamTest, SubTeamWithoutThisRankIsRefused) {
  Team world = sixRanksOnThreeHosts(0, {0, 1, 2, 3, 4, 5});
  EXPECT_THROW(world.subTeam({1, 2}), Error);
  EXPECT_THROW(world.subTeam({0, 6}), Error);
}

// Teams whose ranks sit on hosts of the given sizes, numbered host by host.
Team teamOnHosts(const std::vector<int>& sizes) {
  Team team;
  team.nranks = 0;
  for (size_t host = 0; host < sizes.size(); ++host)
    for (int local = 0; local < sizes[host]; ++local) {
      team.members.push_back(team.nranks++);
      team.places.push_back(MemberPlace{static_cast<int>(host), local, 0, 0});
    }
  team.ring = team.members;
  return team;
}

TEST(TeamTest, StepsNeedSeveralHostsOneWithSeveralRanks) {
  auto fits = [](const std::vector<int>& sizes) {
    Team team = teamOnHosts(sizes);
    team.hosts = hostsOf(team);
    return hierarchicalFits(team);
  };
  EXPECT_TRUE(fits({2, 2}));
  EXPECT_TRUE(fits({3, 3, 3}));
  EXPECT_TRUE(fits({2, 3}));
  EXPECT_TRUE(fits({1, 2, 3}));
  EXPECT_FALSE(fits({4}));        // one host: nothing to save
  EXPECT_FALSE(fits({1, 1, 1}));  // one per host: the flat ring already is it
}

// Small AllReduce goes through each host's first rank on any layout: on
// hosts of 1, 2 and 3 ranks the leaders are ranks 0, 1 and 3, in host order.
TEST(TeamTest, LeadersOfUnevenHostsAreEachHostsFirstRankInHostOrder) {
  EXPECT_EQ(hostsOf(teamOnHosts({2, 3})), 2);
  EXPECT_EQ(hostsOf(teamOnHosts({4})), 1);
  Team world = teamOnHosts({1, 2, 3});
  EXPECT_EQ(hostsOf(world), 3);
  world.rank = 3;  // host 2's first rank
  const Team leaders = world.localIndexTeam();
  EXPECT_EQ(leaders.members, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(leaders.rank, 2);
  for (int i = 0; i < leaders.nranks; ++i) EXPECT_EQ(leaders.places[i].host, i);
  const Team host = world.hostTeam();
  EXPECT_EQ(host.members, (std::vector<int>{3, 4, 5}));
  EXPECT_EQ(host.rank, 0);
}

// Hierarchical schedules place blocks by these lists: every host's members
// in host order, and the team indices of the local-index team's members.
// Copies of a team share them, formed once.
TEST(TeamTest, MemberListsFollowHostsAndLocalIndex) {
  Team world = teamOnHosts({1, 2, 3});
  world.rank = 4;  // host 2's second rank
  EXPECT_EQ(world.membersByHost(), (std::vector<std::vector<int>>{{0}, {1, 2}, {3, 4, 5}}));
  EXPECT_EQ(world.membersWithMyLocalIndex(), (std::vector<int>{2, 4}));
  EXPECT_EQ(world.localIndexTeam().members, (std::vector<int>{2, 4}));
  EXPECT_EQ(world.localIndexTeam().rank, 1);
  const Team copy = world;
  EXPECT_EQ(&copy.hostTeam(), &world.hostTeam());
  EXPECT_EQ(copy.hostTeam().members, (std::vector<int>{3, 4, 5}));
}

TEST(TeamTest, HostsAreDescribedByTheirRankCounts) {
  EXPECT_EQ(describeHosts(teamOnHosts({1, 2, 3})), "3 hosts with 1, 2 and 3 ranks");
  EXPECT_EQ(describeHosts(teamOnHosts({2, 2})), "2 hosts with 2 and 2 ranks");
  EXPECT_EQ(describeHosts(teamOnHosts({4})), "1 host with 4 ranks");
  EXPECT_EQ(describeHosts(teamOnHosts({1})), "1 host with 1 rank");
}

}  // namespace
}  // namespace loom

// The transport seam seen from a real job: LOOM_TRANSPORTS forcing or
// excluding shared memory at init, the INFO line naming each pair's
// transport, and algorithms running on sub-teams that map their indices to
// the communicator's ranks.
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "collectives/collectives.h"
#include "core/handles.h"
#include "support/rank_harness.h"
#include "support/scoped_env.h"

namespace loom::test {
namespace {

class TransportSelectionTest : public ::testing::TestWithParam<RankMode> {};

TEST_P(TransportSelectionTest, ForcingSharedMemoryRuns) {
  ScopedEnv transports("LOOM_TRANSPORTS", "shm");
  runRanks(GetParam(), 3, [](const RankContext& ctx) {
    int64_t value = ctx.rank + 1, sum = 0;
    ASSERT_EQ(loomAllReduce(&value, &sum, 1, loomInt64, loomSum, ctx.comm, nullptr, nullptr), loomSuccess)
        << loomCommGetLastError(ctx.comm);
    EXPECT_EQ(sum, 6);
  });
}

// Every rank's init fails with `expected`; `check` reads its sentence.
// Ranks as threads only: the ranks share one unique id made here, and
// forking after loomGetUniqueId (whose rendezvous thread then runs) is what
// the harness's process mode must never do. The failures below are decided
// from identities and places, alike in both modes.
void expectEveryInitFails(int nranks, loomResult_t expected,
                          const std::function<void(int rank, const std::string& sentence)>& check) {
  HarnessOptions options;
  options.createComm = false;
  loomUniqueId id;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess);
  runRanks(
      RankMode::kThreads, nranks,
      [&](const RankContext& ctx) {
        loomComm_t comm = nullptr;
        loomConfig_t config = LOOM_CONFIG_INITIALIZER;
        config.timeoutMs = 20000;
        EXPECT_EQ(loomCommInitRank(&comm, nranks, id, ctx.rank, &config), expected);
        EXPECT_EQ(comm, nullptr);
        check(ctx.rank, loomGetLastError());
      },
      options);
}

TEST(TransportSelectionErrors, ExcludingEveryTransportOnOneHostFailsInitNamingThePair) {
  ScopedEnv transports("LOOM_TRANSPORTS", "^shm,tcp");
  expectEveryInitFails(2, loomUnsupported, [](int rank, const std::string& sentence) {
    const int peer = 1 - rank;
    EXPECT_NE(sentence.find("no transport can connect rank " + std::to_string(rank) + " and rank " +
                            std::to_string(peer) + " (both run on host "),
              std::string::npos)
        << sentence;
    EXPECT_NE(sentence.find("LOOM_TRANSPORTS=^shm,tcp"), std::string::npos) << sentence;
  });
}

// A forced algorithm is never silently replaced: on one host there is no
// hierarchy, and every rank's init says so.
TEST(TransportSelectionErrors, ForcedHierarchyOnOneHostFailsInitSayingWhy) {
  ScopedEnv force("LOOM_ALGO", "hierarchical");
  expectEveryInitFails(3, loomUnsupported, [](int, const std::string& sentence) {
    EXPECT_NE(sentence.find("LOOM_ALGO='hierarchical' leaves AllReduce only hierarchical, which needs ranks on at "
                            "least two hosts, some host with more than one: this communicator has 1 host "
                            "with 3 ranks"),
              std::string::npos)
        << sentence;
  });
}

TEST(TransportSelectionErrors, UnknownTransportIsRefusedBeforeAnyRankWaits) {
  loomUniqueId id;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess);
  ScopedEnv transports("LOOM_TRANSPORTS", "ib,shm");
  loomComm_t comm = nullptr;
  EXPECT_EQ(loomCommInitRank(&comm, 2, id, 0, nullptr), loomInvalidArgument);
  EXPECT_NE(
      std::string(loomGetLastError())
          .find("LOOM_TRANSPORTS='ib,shm' names transport 'ib', which this Loom does not have (it has: shm, tcp, mem)"),
      std::string::npos)
      << loomGetLastError();
}

// Evens and odds each run a ring AllReduce on their own sub-team, at once,
// inside one operation of the whole communicator: every rank gets the sum
// over its sub-team only, which holds only if sub-team indices reach the
// right communicator ranks.
TEST_P(TransportSelectionTest, SubTeamsRunAlgorithmsOnTheirMembers) {
  runRanks(GetParam(), 5, [](const RankContext& ctx) {
    constexpr size_t kCount = 70001;  // several slots and an uneven split
    std::vector<int32_t> in(kCount), out(kCount, -1);
    for (size_t i = 0; i < kCount; ++i) in[i] = static_cast<int32_t>(ctx.rank * 1000 + i % 97);
    std::vector<int> mine;
    for (int r = ctx.rank % 2; r < ctx.nranks; r += 2) mine.push_back(r);
    CollectiveArgs args{in.data(), out.data(), kCount, loomInt32, loomSum, 0};
    CollectiveCall call;
    call.kind = OperationKind::kAllReduce;
    std::string error;
    auto body = [&](const Team& team, const WaitContext& wait) -> Task<> {
      Team sub = team.subTeam(mine);
      EXPECT_EQ(sub.nranks, static_cast<int>(mine.size()));
      EXPECT_EQ(sub.peerOf(sub.rank), ctx.rank);
      co_await ringAllReduce(sub, args, wait);
    };
    ASSERT_EQ(communicatorOf(ctx.comm)->run("SubTeams", &call, body, &error), loomSuccess) << error;
    const int32_t rankSum = std::accumulate(mine.begin(), mine.end(), 0) * 1000;
    for (size_t i = 0; i < kCount; ++i)
      ASSERT_EQ(out[i], rankSum + static_cast<int32_t>(mine.size() * (i % 97))) << "element " << i;
    // Host team: every rank of this one host; local-index team: this rank alone.
    auto check = [&](const Team& team, const WaitContext&) -> Task<> {
      EXPECT_EQ(team.hostTeam().nranks, ctx.nranks);
      Team alone = team.localIndexTeam();
      EXPECT_EQ(alone.nranks, 1);
      EXPECT_EQ(alone.peerOf(0), ctx.rank);
      co_return;
    };
    ASSERT_EQ(communicatorOf(ctx.comm)->run("Places", &call, check, &error), loomSuccess) << error;
  });
}

// Algorithms cut messages by the smallest slot among a team's pairs: on
// hosts a a b b, shared memory's 128 KiB within a host and TCP's slots
// between hosts. Every rank must find the same figure for the same team,
// whichever of its own connections are which.
TEST(TeamSlotsTest, TeamsCutBySmallestSlotAmongTheirPairs) {
  for (const size_t socketSlot : {size_t{65536}, size_t{1048576}}) {
    SCOPED_TRACE("LOOM_SOCKET_SLOT_BYTES=" + std::to_string(socketSlot));
    ScopedEnv slotBytes("LOOM_SOCKET_SLOT_BYTES", std::to_string(socketSlot).c_str());
    HarnessOptions options;
    options.createComm = false;
    runRanks(
        RankMode::kProcesses, 4,
        [socketSlot](const RankContext& ctx) {
          setenv("LOOM_HOST_ID", ctx.rank < 2 ? "slots-a" : "slots-b", 1);
          loomComm_t comm = nullptr;
          ASSERT_EQ(loomCommInitRank(&comm, ctx.nranks, *ctx.id, ctx.rank, nullptr), loomSuccess) << loomGetLastError();
          const size_t shmSlot = 128 * 1024;
          CollectiveCall call;
          call.kind = OperationKind::kAllReduce;
          std::string error;
          auto body = [&](const Team& team, const WaitContext&) -> Task<> {
            EXPECT_EQ(team.slotBytes, std::min(shmSlot, socketSlot));
            EXPECT_EQ(team.hostTeam().slotBytes, shmSlot);
            EXPECT_EQ(team.localIndexTeam().slotBytes, socketSlot);
            EXPECT_EQ(team.subTeam({ctx.rank}).slotBytes, std::min(shmSlot, socketSlot))
                << "a team of one rank has no pair: the smallest slot of any kind";
            co_return;
          };
          ASSERT_EQ(communicatorOf(comm)->run("Slots", &call, body, &error), loomSuccess) << error;
          EXPECT_EQ(loomCommDestroy(comm), loomSuccess);
        },
        options);
  }
}

// Rank `odd` of three sets `variable` to `value` (every rank on a host of
// its own when `ownHosts`): init must fail on every rank with a sentence
// that names each of `mentions` and says to set them alike.
void expectEveryRankRefuses(int odd, const char* variable, const char* value, bool ownHosts,
                            const std::vector<std::string>& mentions) {
  HarnessOptions options;
  options.createComm = false;
  runRanks(
      RankMode::kProcesses, 3,
      [&](const RankContext& ctx) {
        if (ownHosts) setenv("LOOM_HOST_ID", ("settings-" + std::to_string(ctx.rank)).c_str(), 1);
        if (ctx.rank == odd) setenv(variable, value, 1);
        loomComm_t comm = nullptr;
        loomConfig_t config = LOOM_CONFIG_INITIALIZER;
        config.timeoutMs = 20000;
        EXPECT_EQ(loomCommInitRank(&comm, ctx.nranks, *ctx.id, ctx.rank, &config), loomInvalidUsage);
        EXPECT_EQ(comm, nullptr);
        const std::string sentence = loomGetLastError();
        for (const std::string& mention : mentions) EXPECT_NE(sentence.find(mention), std::string::npos) << sentence;
        EXPECT_NE(sentence.find("set these alike on every rank"), std::string::npos) << sentence;
      },
      options);
}

// Ranks that never share a FIFO must still agree on every kind's slots, or
// they would cut messages differently: init refuses, naming both settings.
TEST(TeamSlotsTest, RanksWithDifferentSlotSettingsFailInitNamingThem) {
  expectEveryRankRefuses(2, "LOOM_SOCKET_SLOT_BYTES", "65536", true,
                         {"LOOM_SOCKET_SLOT_BYTES=65536", "LOOM_SOCKET_SLOT_BYTES=262144"});
}

// A rank that forces TCP while the others would use shared memory with it
// would wait for connections nobody makes: init refuses on every rank,
// naming what each allows, however it was spelt ("^shm" is "tcp").
TEST(TeamSlotsTest, RanksWithDifferentTransportsFailInitNamingThem) {
  expectEveryRankRefuses(1, "LOOM_TRANSPORTS", "^shm", false, {"LOOM_TRANSPORTS=tcp ", "LOOM_TRANSPORTS=shm,tcp "});
}

// Ranks that choose algorithms differently would run different schedules
// of one call: a LOOM_ALGO or a size limit set on one rank only fails init
// on every rank, naming the setting as each rank reads it.
TEST(TeamSlotsTest, RanksWithDifferentAlgorithmSettingsFailInitNamingThem) {
  expectEveryRankRefuses(0, "LOOM_ALGO", "TREE", false,
                         {"LOOM_ALGO=allreduce:tree;broadcast:tree;reduce:tree on rank 0", "LOOM_ALGO=auto on rank"});
  expectEveryRankRefuses(2, "LOOM_ALLPAIRS_MAX_BYTES", "1024", false,
                         {"LOOM_ALLPAIRS_MAX_BYTES=1024 on rank 2", "LOOM_ALLPAIRS_MAX_BYTES=16384 on rank"});
  // The cost model's constants by their fingerprint: a file on one rank.
  char path[] = "/tmp/loom-tuning-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string text = "shm latency_us 7\n";
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  expectEveryRankRefuses(1, "LOOM_TUNING_FILE", path, false, {"LOOM_TUNING_FILE=builtin on rank"});
  unlink(path);
}

INSTANTIATE_TEST_SUITE_P(Modes, TransportSelectionTest, ::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                         [](const auto& info) { return modeName(info.param); });

}  // namespace
}  // namespace loom::test

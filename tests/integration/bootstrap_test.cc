// Bootstrap: admission by secret, launch environments, and CommSplit.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "support/rank_harness.h"

namespace loom::test {
namespace {

int freePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

void expectAllReduceOfRanks(loomComm_t comm, int nranks) {
  int rank = -1;
  ASSERT_EQ(loomCommUserRank(comm, &rank), loomSuccess);
  int64_t mine = rank, sum = 0;
  ASSERT_EQ(loomAllReduce(&mine, &sum, 1, loomInt64, loomSum, comm, nullptr, nullptr), loomSuccess)
      << loomCommGetLastError(comm);
  EXPECT_EQ(sum, static_cast<int64_t>(nranks) * (nranks - 1) / 2);
}

TEST(BootstrapTest, PeerWithTheWrongSecretIsRefused) {
  loomUniqueId id, forged;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess);
  forged = id;
  forged.internal[40] ^= 0x55;  // inside the secret (bytes 32 to 47 of format 2)
  loomComm_t intruder = nullptr;
  loomConfig_t quick = LOOM_CONFIG_INITIALIZER;
  quick.timeoutMs = 3000;
  loomResult_t intruderResult = loomSuccess;
  std::string intruderSentence;
  // The rendezvous logs the refusal (at WARN, the default level) before it
  // tells the peer, so the line is there once the intruder's init returns.
  ::testing::internal::CaptureStderr();
  std::thread attempt([&] {
    intruderResult = loomCommInitRank(&intruder, 2, forged, 0, &quick);
    intruderSentence = loomGetLastError();
  });
  attempt.join();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(intruderResult, loomSuccess);
  EXPECT_EQ(intruder, nullptr);
  // Told why, not "Broken pipe".
  EXPECT_NE(intruderSentence.find("refused this connection: wrong secret"), std::string::npos) << intruderSentence;
  EXPECT_EQ(intruderSentence.find("Broken pipe"), std::string::npos) << intruderSentence;
  // The rendezvous says who it refused and why.
  EXPECT_TRUE(std::regex_search(
      log, std::regex("LOOM WARN BOOTSTRAP the rendezvous at [0-9.]+:[0-9]+ refused [0-9.]+:[0-9]+: wrong secret")))
      << log;
  // The real ranks still get in: the refused peer took no rank.
  std::vector<loomComm_t> comms(2, nullptr);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r)
    ranks.emplace_back(
        [&, r] { EXPECT_EQ(loomCommInitRank(&comms[r], 2, id, r, &quick), loomSuccess) << loomGetLastError(); });
  for (auto& t : ranks) t.join();
  for (loomComm_t c : comms) {
    ASSERT_NE(c, nullptr);
  }
  std::thread other([&] { expectAllReduceOfRanks(comms[1], 2); });
  expectAllReduceOfRanks(comms[0], 2);
  other.join();
  for (loomComm_t c : comms) EXPECT_EQ(loomCommDestroy(c), loomSuccess);
}

// Each launcher's variables, set in forked ranks before loomCommInitFromEnv.
struct LauncherCase {
  const char* name;
  const char* rankVar;
  const char* sizeVar;
};

class InitFromEnvTest : public ::testing::TestWithParam<LauncherCase> {};

TEST_P(InitFromEnvTest, RanksMeetThroughTheLaunchersVariables) {
  const LauncherCase launcher = GetParam();
  const std::string port = std::to_string(freePort());
  HarnessOptions options;
  options.createComm = false;
  runRanks(
      RankMode::kProcesses, 3,
      [&](const RankContext& ctx) {
        setenv(launcher.rankVar, std::to_string(ctx.rank).c_str(), 1);
        setenv(launcher.sizeVar, "3", 1);
        setenv("MASTER_ADDR", "127.0.0.1", 1);
        setenv("MASTER_PORT", port.c_str(), 1);
        setenv("LOOM_SECRET", "test-secret", 1);
        loomComm_t comm = nullptr;
        ASSERT_EQ(loomCommInitFromEnv(&comm, nullptr), loomSuccess) << loomGetLastError();
        int count = 0;
        EXPECT_EQ(loomCommCount(comm, &count), loomSuccess);
        EXPECT_EQ(count, 3);
        expectAllReduceOfRanks(comm, 3);
        EXPECT_EQ(loomCommDestroy(comm), loomSuccess);
      },
      options);
}

INSTANTIATE_TEST_SUITE_P(Launchers, InitFromEnvTest,
                         ::testing::Values(LauncherCase{"torchrun", "RANK", "WORLD_SIZE"},
                                           LauncherCase{"OpenMPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                           LauncherCase{"Slurm", "SLURM_PROCID", "SLURM_NTASKS"},
                                           LauncherCase{"PMI", "PMI_RANK", "PMI_SIZE"}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(InitFromEnvErrorsTest, MissingVariablesAreNamed) {
  HarnessOptions options;
  options.createComm = false;
  // In a child process: the environment is process-wide.
  runRanks(
      RankMode::kProcesses, 1,
      [](const RankContext&) {
        for (const char* name :
             {"RANK", "WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK", "MASTER_ADDR", "MASTER_PORT"})
          unsetenv(name);
        loomComm_t comm = nullptr;
        EXPECT_EQ(loomCommInitFromEnv(&comm, nullptr), loomInvalidUsage);
        EXPECT_NE(std::string(loomGetLastError()).find("none of RANK (torchrun, loomrun)"), std::string::npos)
            << loomGetLastError();
        setenv("RANK", "0", 1);
        EXPECT_EQ(loomCommInitFromEnv(&comm, nullptr), loomInvalidUsage);
        EXPECT_NE(std::string(loomGetLastError()).find("WORLD_SIZE is not set"), std::string::npos)
            << loomGetLastError();
        setenv("WORLD_SIZE", "2", 1);
        EXPECT_EQ(loomCommInitFromEnv(&comm, nullptr), loomInvalidUsage);
        EXPECT_NE(std::string(loomGetLastError()).find("MASTER_ADDR is not set"), std::string::npos)
            << loomGetLastError();
        setenv("MASTER_ADDR", "127.0.0.1", 1);
        setenv("MASTER_PORT", "99999", 1);
        EXPECT_EQ(loomCommInitFromEnv(&comm, nullptr), loomInvalidArgument);
        EXPECT_NE(std::string(loomGetLastError()).find("MASTER_PORT='99999'"), std::string::npos) << loomGetLastError();
        setenv("RANK", "5", 1);
        EXPECT_EQ(loomCommInitFromEnv(&comm, nullptr), loomInvalidUsage);
        EXPECT_NE(std::string(loomGetLastError()).find("RANK=5 is not below WORLD_SIZE=2"), std::string::npos)
            << loomGetLastError();
        EXPECT_EQ(comm, nullptr);
      },
      options);
}

class SplitTest : public ::testing::TestWithParam<RankMode> {};

TEST_P(SplitTest, ColorsFormGroupsOrderedByKey) {
  runRanks(GetParam(), 5, [](const RankContext& ctx) {
    // Even and odd ranks; keys reverse the order; rank 4 opts out.
    const int color = ctx.rank == 4 ? LOOM_SPLIT_NOCOLOR : ctx.rank % 2;
    loomComm_t sub = nullptr;
    ASSERT_EQ(loomCommSplit(ctx.comm, color, -ctx.rank, &sub, nullptr), loomSuccess) << loomCommGetLastError(ctx.comm);
    if (ctx.rank == 4) {
      EXPECT_EQ(sub, nullptr);
    } else {
      ASSERT_NE(sub, nullptr);
      int count = 0, subRank = -1;
      EXPECT_EQ(loomCommCount(sub, &count), loomSuccess);
      EXPECT_EQ(loomCommUserRank(sub, &subRank), loomSuccess);
      EXPECT_EQ(count, 2);  // {0, 2} and {1, 3}
      EXPECT_EQ(subRank, ctx.rank < 2 ? 1 : 0) << "keys are -rank: the higher parent rank comes first";
      // The members are who we think: sum of parent ranks in the group.
      int32_t mine = ctx.rank, sum = 0;
      ASSERT_EQ(loomAllReduce(&mine, &sum, 1, loomInt32, loomSum, sub, nullptr, nullptr), loomSuccess);
      EXPECT_EQ(sum, ctx.rank % 2 == 0 ? 2 : 4);
      EXPECT_EQ(loomCommDestroy(sub), loomSuccess);
    }
    // The parent still works after the split, for every rank.
    int32_t one = 1, total = 0;
    ASSERT_EQ(loomAllReduce(&one, &total, 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr), loomSuccess);
    EXPECT_EQ(total, 5);
  });
}

TEST_P(SplitTest, InvalidColorIsRefusedOnEveryRank) {
  runRanks(GetParam(), 2, [](const RankContext& ctx) {
    loomComm_t sub = nullptr;
    EXPECT_EQ(loomCommSplit(ctx.comm, ctx.rank == 1 ? -5 : 0, 0, &sub, nullptr), loomInvalidArgument);
    EXPECT_NE(std::string(loomCommGetLastError(ctx.comm)).find("rank 1 passed color -5"), std::string::npos)
        << loomCommGetLastError(ctx.comm);
    EXPECT_EQ(sub, nullptr);
  });
}

INSTANTIATE_TEST_SUITE_P(Modes, SplitTest, ::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                         [](const auto& info) { return modeName(info.param); });

}  // namespace
}  // namespace loom::test

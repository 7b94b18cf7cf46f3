// A rank that dies or fails is named by the others, promptly: they never
// sit out the whole timeout, and never hang.
#include <dirent.h>
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/rank_harness.h"

namespace loom::test {
namespace {

TEST(PeerFailureTest, ProcessThatExitsIsNamedByItsPeers) {
  HarnessOptions options;
  options.timeoutMs = 60000;  // far longer than the test: the death must be noticed, not timed out
  runRanks(
      RankMode::kProcesses, 3,
      [](const RankContext& ctx) {
        if (ctx.rank == 1) _exit(0);  // dies without a word, mid-job
        std::vector<float> data(1 << 20, 1.0f), out(1 << 20);
        auto start = std::chrono::steady_clock::now();
        loomResult_t rc =
            loomAllReduce(data.data(), out.data(), data.size(), loomFloat32, loomSum, ctx.comm, nullptr, nullptr);
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        EXPECT_EQ(rc, loomRemoteError) << loomGetErrorString(rc);
        std::string sentence = loomCommGetLastError(ctx.comm);
        EXPECT_NE(sentence.find("rank 1 (pid"), std::string::npos) << sentence;
        EXPECT_NE(sentence.find("exited"), std::string::npos) << sentence;
        EXPECT_LT(seconds, 30.0) << "noticed only after " << seconds << " s";
      },
      options);
}

TEST(PeerFailureTest, AbortOnOneRankFailsThePeersWaitingForIt) {
  HarnessOptions options;
  options.timeoutMs = 60000;
  runRanks(
      RankMode::kProcesses, 2,
      [](const RankContext& ctx) {
        int32_t value = 1, result = 0;
        if (ctx.rank == 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          ASSERT_EQ(loomCommAbort(ctx.comm), loomSuccess);
          *ctx.commReleased = true;
          return;
        }
        loomResult_t rc = loomAllReduce(&value, &result, 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr);
        EXPECT_EQ(rc, loomRemoteError);
        std::string sentence = loomCommGetLastError(ctx.comm);
        EXPECT_NE(sentence.find("rank 0 failed: rank 0 aborted its communicator"), std::string::npos) << sentence;
      },
      options);
}

// Names in /dev/shm that start with "loom": Loom's shared memory has no
// names (memfds, shm_segment.h), so the count never grows.
int loomNamesInDevShm() {
  int count = 0;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* entry = readdir(dir))
      if (std::strncmp(entry->d_name, "loom", 4) == 0) ++count;
    closedir(dir);
  }
  return count;
}

TEST(PeerFailureTest, NoSharedMemoryNameExistsAfterInit) {
  const int before = loomNamesInDevShm();
  runRanks(RankMode::kProcesses, 4, [&](const RankContext& ctx) {
    int32_t in = 1, out = 0;
    ASSERT_EQ(loomAllReduce(&in, &out, 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr), loomSuccess);
    EXPECT_EQ(loomNamesInDevShm(), before);
  });
  EXPECT_EQ(loomNamesInDevShm(), before);
}

// A rank killed with SIGKILL at some point of its init (before, during or
// after the shared-memory rounds): the others' init or first collective
// fails naming it within the timeout, and nothing is left in /dev/shm.
TEST(PeerFailureTest, RankKilledDuringInitLeavesNothingBehind) {
  const int before = loomNamesInDevShm();
  for (int delayMs : {0, 2, 10, 30, 80}) {
    HarnessOptions options;
    options.createComm = false;
    options.killedRank = 2;
    runRanks(
        RankMode::kProcesses, 3,
        [&](const RankContext& ctx) {
          loomConfig_t config = LOOM_CONFIG_INITIALIZER;
          config.timeoutMs = 5000;
          if (ctx.rank == 2) {
            std::thread killer([&] {
              std::this_thread::sleep_for(std::chrono::milliseconds(delayMs));
              raise(SIGKILL);
            });
            loomComm_t comm = nullptr;
            loomCommInitRank(&comm, ctx.nranks, *ctx.id, ctx.rank, &config);
            killer.join();  // never returns
          }
          loomComm_t comm = nullptr;
          loomResult_t rc = loomCommInitRank(&comm, ctx.nranks, *ctx.id, ctx.rank, &config);
          std::string sentence;
          if (rc == loomSuccess) {
            // Rank 2 died after init: the first collective names it.
            int32_t in = 1, out = 0;
            rc = loomAllReduce(&in, &out, 1, loomInt32, loomSum, comm, nullptr, nullptr);
            sentence = loomCommGetLastError(comm);
            loomCommAbort(comm);
          } else {
            sentence = loomGetLastError();
          }
          EXPECT_TRUE(rc == loomRemoteError || rc == loomTimeout || rc == loomSystemError)
              << "delay " << delayMs << " ms: " << loomGetErrorString(rc) << ": " << sentence;
          // Named at every point: by the rendezvous before identities are
          // exchanged (it never joined, or left), by its pid after.
          EXPECT_NE(sentence.find("rank 2"), std::string::npos) << "delay " << delayMs << " ms: " << sentence;
        },
        options);
    EXPECT_EQ(loomNamesInDevShm(), before) << "after a kill " << delayMs << " ms into init";
  }
}

// kill -9 in the middle of a stream of large AllReduces: every survivor's
// call fails naming the killed rank (directly, or through the peer that saw
// it first), within seconds, and nothing is left in /dev/shm.
class KilledMidOperationTest : public ::testing::TestWithParam<int> {};

TEST_P(KilledMidOperationTest, EverySurvivorNamesTheKilledRank) {
  const int nranks = GetParam();
  const int victim = nranks / 2;
  const int before = loomNamesInDevShm();
  HarnessOptions options;
  options.killedRank = victim;
  options.timeoutMs = 60000;  // the death must be seen, not timed out
  runRanks(
      RankMode::kProcesses, nranks,
      [&](const RankContext& ctx) {
        std::vector<float> in(1 << 18, 1.0f), out(1 << 18);
        if (ctx.rank == victim) {
          std::thread killer([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(150));
            raise(SIGKILL);
          });
          for (;;) loomAllReduce(in.data(), out.data(), in.size(), loomFloat32, loomSum, ctx.comm, nullptr, nullptr);
        }
        const auto start = std::chrono::steady_clock::now();
        loomResult_t rc = loomSuccess;
        for (int i = 0; i < 100000 && rc == loomSuccess; ++i)
          rc = loomAllReduce(in.data(), out.data(), in.size(), loomFloat32, loomSum, ctx.comm, nullptr, nullptr);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const std::string sentence = loomCommGetLastError(ctx.comm);
        EXPECT_EQ(rc, loomRemoteError) << loomGetErrorString(rc) << ": " << sentence;
        EXPECT_NE(sentence.find("rank " + std::to_string(victim) + " (pid"), std::string::npos) << sentence;
        EXPECT_NE(sentence.find("exited"), std::string::npos) << sentence;
        EXPECT_LT(seconds, 30.0) << "noticed only after " << seconds << " s";
        ASSERT_EQ(loomCommAbort(ctx.comm), loomSuccess);
        *ctx.commReleased = true;
      },
      options);
  EXPECT_EQ(loomNamesInDevShm(), before);
}

INSTANTIATE_TEST_SUITE_P(Ranks, KilledMidOperationTest, ::testing::Values(2, 3, 5, 8),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "ranks";
                         });

}  // namespace
}  // namespace loom::test

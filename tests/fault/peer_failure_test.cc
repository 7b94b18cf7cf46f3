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

}  // namespace
}  // namespace loom::test

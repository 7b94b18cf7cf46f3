// Timeouts at their extremes: values up to INT64_MAX saturate to "no end"
// instead of overflowing the clock into the past (which made every wait
// fail at once), and loomWait(-1) returns the operation's own outcome, whose
// sentence names the rank it waited for, instead of a deadline of its own.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "support/rank_harness.h"
#include "support/scoped_env.h"

namespace loom::test {
namespace {

// Rank 1 arrives late; rank 0's call must wait for it, not fail at once.
void lateSecondRank(const RankContext& ctx, loomRequest_t* request) {
  if (ctx.rank == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int32_t in = ctx.rank + 1, out = 0;
  ASSERT_EQ(loomAllReduce(&in, &out, 1, loomInt32, loomSum, ctx.comm, nullptr, request), loomSuccess)
      << loomCommGetLastError(ctx.comm);
  if (request != nullptr) {
    ASSERT_EQ(loomWait(*request, INT64_MAX), loomSuccess) << loomCommGetLastError(ctx.comm);
    loomRequestFree(*request);
  }
  EXPECT_EQ(out, 3);
}

TEST(TimeoutsTest, HugeTimeoutFromTheEnvironmentSaturates) {
  ScopedEnv huge("LOOM_TIMEOUT_MS", "10000000000000");
  HarnessOptions options;
  options.timeoutMs = -1;  // the communicators take LOOM_TIMEOUT_MS
  runRanks(
      RankMode::kProcesses, 2, [](const RankContext& ctx) { lateSecondRank(ctx, nullptr); }, options);
}

TEST(TimeoutsTest, Int64MaxTimeoutInTheConfigSaturates) {
  HarnessOptions options;
  options.createComm = false;
  loomUniqueId id;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess);
  runRanks(
      RankMode::kThreads, 2,
      [&](const RankContext& ctx) {
        loomConfig_t config = LOOM_CONFIG_INITIALIZER;
        config.timeoutMs = INT64_MAX;
        loomComm_t comm = nullptr;
        ASSERT_EQ(loomCommInitRank(&comm, ctx.nranks, id, ctx.rank, &config), loomSuccess) << loomGetLastError();
        RankContext withComm = ctx;
        withComm.comm = comm;
        loomRequest_t request = nullptr;
        lateSecondRank(withComm, &request);
        EXPECT_EQ(loomCommDestroy(comm), loomSuccess);
      },
      options);
}

TEST(TimeoutsTest, WaitWithInt64MaxWaitsForTheOperation) {
  runRanks(RankMode::kProcesses, 2, [](const RankContext& ctx) {
    loomRequest_t request = nullptr;
    lateSecondRank(ctx, &request);
  });
}

// The communicator's timeout is short and rank 1 never calls: loomWait(-1)
// returns when the operation itself times out, with the sentence that names
// rank 1, rather than a timeout of loomWait's own a moment earlier.
TEST(TimeoutsTest, WaitMinusOneReturnsTheOperationsOwnTimeout) {
  HarnessOptions options;
  options.timeoutMs = 400;
  runRanks(
      RankMode::kProcesses, 2,
      [](const RankContext& ctx) {
        if (ctx.rank == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          return;
        }
        int32_t in = 1, out = 0;
        loomRequest_t request = nullptr;
        ASSERT_EQ(loomAllReduce(&in, &out, 1, loomInt32, loomSum, ctx.comm, nullptr, &request), loomSuccess);
        EXPECT_EQ(loomWait(request, -1), loomTimeout);
        const std::string sentence = loomGetLastError();
        EXPECT_NE(sentence.find("AllReduce #1 on rank 0 timed out after 400 ms waiting for rank 1 to send data"),
                  std::string::npos)
            << sentence;
        loomRequestFree(request);
      },
      options);
}

}  // namespace
}  // namespace loom::test

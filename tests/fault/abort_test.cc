// What a training job does when a peer stalls: a watchdog thread aborts the
// communicator while the main thread is blocked in a collective, the main
// thread gets loomAborted promptly, and the job builds a new communicator
// (a new unique id) and goes on.
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "support/rank_harness.h"
#include "support/scoped_env.h"

namespace loom::test {
namespace {

struct Shared {
  std::atomic<int> aborted{0};  // rank 0 has aborted its first communicator
  std::atomic<bool> haveId{false};
  loomUniqueId id;
};

void abortFromAnotherThreadThenUseANewCommunicator() {
  void* page = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  Shared* shared = new (page) Shared();
  HarnessOptions options;
  options.timeoutMs = 60000;  // the abort, not the timeout, must end the wait
  runRanks(
      RankMode::kProcesses, 2,
      [&](const RankContext& ctx) {
        if (ctx.rank == 0) {
          // Blocked: rank 1 never calls this AllReduce. A watchdog aborts.
          std::thread watchdog([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            EXPECT_EQ(loomCommAbort(ctx.comm), loomSuccess);
            shared->aborted.store(1);
          });
          int32_t in = 1, out = 0;
          EXPECT_EQ(loomAllReduce(&in, &out, 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr), loomAborted);
          watchdog.join();
          *ctx.commReleased = true;
          ASSERT_EQ(loomGetUniqueId(&shared->id), loomSuccess) << loomGetLastError();
          shared->haveId.store(true);
        } else {
          // Rank 1 aborts only after rank 0 did, so that rank 0's wait ends
          // by its own abort rather than by seeing rank 1's.
          for (int i = 0; i < 60000 && shared->aborted.load() == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          ASSERT_EQ(loomCommAbort(ctx.comm), loomSuccess);
          *ctx.commReleased = true;
          for (int i = 0; i < 60000 && !shared->haveId.load(); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          ASSERT_TRUE(shared->haveId.load()) << "rank 0 never made a new unique id";
        }
        loomComm_t fresh = nullptr;
        ASSERT_EQ(loomCommInitRank(&fresh, ctx.nranks, shared->id, ctx.rank, nullptr), loomSuccess)
            << loomGetLastError();
        int32_t in = ctx.rank + 1, out = 0;
        EXPECT_EQ(loomAllReduce(&in, &out, 1, loomInt32, loomSum, fresh, nullptr, nullptr), loomSuccess)
            << loomCommGetLastError(fresh);
        EXPECT_EQ(out, 3);
        EXPECT_EQ(loomCommDestroy(fresh), loomSuccess);
      },
      options);
  munmap(page, sizeof(Shared));
}

TEST(AbortTest, AbortFromAnotherThreadThenANewCommunicatorWorks) {
  abortFromAnotherThreadThenUseANewCommunicator();
}

// Over TCP the blocked rank's engine sleeps in poll on its socket to rank
// 1, not on its doorbell: the abort must still end that wait.
TEST(AbortTest, AbortWakesAnEngineAsleepOnItsTcpSockets) {
  ScopedEnv tcp("LOOM_TRANSPORTS", "tcp");
  abortFromAnotherThreadThenUseANewCommunicator();
}

}  // namespace
}  // namespace loom::test

// A rank stopped inside a collective (SIGSTOP, a debugger, a starved core):
// every other rank's sentence names it, not the neighbour each happens to
// wait on. Ranks publish a heartbeat while they have operations pending and
// what they wait for; a timed-out rank follows that chain to the rank that
// stopped beating. A short stop only delays the job.
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/rank_harness.h"
#include "support/scoped_env.h"

namespace loom::test {
namespace {

constexpr int kStopped = 2;

struct Shared {
  std::atomic<pid_t> stoppedPid{0};
  std::atomic<int> survivorsDone{0};
};

Shared* sharedPage() {
  void* at = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  return at == MAP_FAILED ? nullptr : new (at) Shared();
}

// Every rank runs AllReduces until one fails; rank 2 stops itself in the
// middle of them, and is continued once every other rank has its error.
// `withSmallCalls`: every other call is 8 floats (all-pairs: each rank
// waits on every peer in turn), the rest a ring that waits on one.
void stopRankTwoAndExpectEveryOtherToNameIt(bool withSmallCalls) {
  Shared* shared = sharedPage();
  ASSERT_NE(shared, nullptr);
  HarnessOptions options;
  options.timeoutMs = 1500;
  runRanks(
      RankMode::kProcesses, 4,
      [&](const RankContext& ctx) {
        std::vector<float> in(1 << 16, 1.0f), out(1 << 16);
        std::thread stopper;
        if (ctx.rank == kStopped) {
          shared->stoppedPid.store(getpid());
          stopper = std::thread([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            kill(getpid(), SIGSTOP);
          });
        }
        loomResult_t rc = loomSuccess;
        for (int i = 0; i < 1000000 && rc == loomSuccess; ++i) {
          const size_t count = withSmallCalls && i % 2 == 1 ? 8 : in.size();
          rc = loomAllReduce(in.data(), out.data(), count, loomFloat32, loomSum, ctx.comm, nullptr, nullptr);
        }
        if (ctx.rank == kStopped) {
          stopper.join();
          return;  // continued after the others failed: its own outcome does not matter
        }
        const std::string sentence = loomCommGetLastError(ctx.comm);
        EXPECT_TRUE(rc == loomTimeout || rc == loomRemoteError) << loomGetErrorString(rc) << ": " << sentence;
        EXPECT_TRUE(sentence.find("rank 2 has shown no sign of life for") != std::string::npos ||
                    sentence.find("rank 2, which has shown no sign of life for") != std::string::npos)
            << "rank " << ctx.rank << ": " << sentence;
        if (shared->survivorsDone.fetch_add(1) + 1 == ctx.nranks - 1) kill(shared->stoppedPid.load(), SIGCONT);
      },
      options);
  munmap(shared, sizeof(Shared));
}

TEST(StallTest, RankStoppedInsideACollectiveIsNamedByEveryOtherRank) {
  stopRankTwoAndExpectEveryOtherToNameIt(false);
}

// Over TCP heartbeats come on sockets, and an engine that slept in poll on
// a socket reads it itself from then on: after the small calls, each rank
// has done so for every peer. A rank whose ring neighbour waits on one that
// waits on rank 2 must still hear the beats of the live ones in between,
// or it would blame one of them.
TEST(StallTest, RankStoppedInsideACollectiveIsNamedByEveryOtherRankOverTcp) {
  ScopedEnv tcp("LOOM_TRANSPORTS", "tcp");
  stopRankTwoAndExpectEveryOtherToNameIt(true);
}

// Stopped for well under the timeout: the collectives just finish later,
// with the right results.
TEST(StallTest, ShortStopOnlyDelaysTheJob) {
  Shared* shared = sharedPage();
  ASSERT_NE(shared, nullptr);
  HarnessOptions options;
  options.timeoutMs = 10000;
  runRanks(
      RankMode::kProcesses, 4,
      [&](const RankContext& ctx) {
        std::vector<float> in(1 << 16, 1.0f), out(1 << 16);
        std::thread waker;
        if (ctx.rank == kStopped) shared->stoppedPid.store(getpid());
        if (ctx.rank == 0) {
          waker = std::thread([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            while (shared->stoppedPid.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            kill(shared->stoppedPid.load(), SIGSTOP);
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            kill(shared->stoppedPid.load(), SIGCONT);
          });
        }
        for (int i = 0; i < 2000; ++i) {
          ASSERT_EQ(loomAllReduce(in.data(), out.data(), in.size(), loomFloat32, loomSum, ctx.comm, nullptr, nullptr),
                    loomSuccess)
              << loomCommGetLastError(ctx.comm);
          ASSERT_EQ(out[i % out.size()], static_cast<float>(ctx.nranks));
        }
        if (waker.joinable()) waker.join();
      },
      options);
  munmap(shared, sizeof(Shared));
}

}  // namespace
}  // namespace loom::test

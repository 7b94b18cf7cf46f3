// Two threads calling into one communicator at once would have the ranks pair
// up different calls (each rank numbers them in its own arrival order). The
// second call is refused with a sentence naming both, the first one goes on
// undisturbed, and communicators of their own keep threads independent.
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "support/rank_harness.h"

namespace loom::test {
namespace {

// Flags the ranks share: in process mode they sit in memory mapped before
// the fork.
struct Shared {
  std::atomic<int> refusedCalls{0};
  std::atomic<int> finishedThreads{0};
};

class SharedFlags {
 public:
  SharedFlags() {
    void* at = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (at == MAP_FAILED) throw std::runtime_error("mmap failed");
    flags_ = new (at) Shared();
  }
  ~SharedFlags() { munmap(flags_, sizeof(Shared)); }
  Shared* operator->() const { return flags_; }

 private:
  Shared* flags_;
};

class ConcurrentUseTest : public ::testing::TestWithParam<RankMode> {};

// Rank 0 calls a blocking AllReduce from two threads at once. Rank 1 joins
// with its one AllReduce only after rank 0 saw a refusal, so whichever of
// rank 0's threads came first is still inside its call when the other
// arrives, however the threads are scheduled.
TEST_P(ConcurrentUseTest, SecondThreadsCallIsRefusedNamingBoth) {
  SharedFlags shared;
  runRanks(GetParam(), 2, [&](const RankContext& ctx) {
    if (ctx.rank == 1) {
      for (int i = 0; i < 60000 && shared->refusedCalls.load() == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ASSERT_EQ(shared->refusedCalls.load(), 1) << "rank 0 never refused its second thread's call";
      int32_t in = 5, out = 0;
      ASSERT_EQ(loomAllReduce(&in, &out, 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr), loomSuccess)
          << loomCommGetLastError(ctx.comm);
      EXPECT_EQ(out, 7 + 5);
      in = 1;
      ASSERT_EQ(loomAllReduce(&in, &out, 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr), loomSuccess)
          << loomCommGetLastError(ctx.comm);
      EXPECT_EQ(out, 2);
      return;
    }
    std::vector<std::thread> threads;
    std::vector<loomResult_t> results(2, loomInProgress);
    std::vector<int32_t> outs(2, 0);
    std::vector<std::string> sentences(2);
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        int32_t in = 7;
        results[t] = loomAllReduce(&in, &outs[t], 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr);
        if (results[t] != loomSuccess) {
          sentences[t] = loomGetLastError();
          shared->refusedCalls.fetch_add(1);
        }
      });
    }
    for (auto& thread : threads) thread.join();
    const int refused = results[0] == loomSuccess ? 1 : 0, served = 1 - refused;
    ASSERT_EQ(results[served], loomSuccess) << loomGetErrorString(results[served]) << ": " << sentences[served];
    EXPECT_EQ(outs[served], 7 + 5);
    EXPECT_EQ(results[refused], loomInvalidUsage) << loomGetErrorString(results[refused]);
    EXPECT_NE(sentences[refused].find("AllReduce on rank 0 was called while another thread's AllReduce on it has "
                                      "not returned"),
              std::string::npos)
        << sentences[refused];
    // A refused call changes nothing: the communicator works on.
    int32_t in = 1, out = 0;
    loomResult_t rc = loomAllReduce(&in, &out, 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr);
    EXPECT_EQ(rc, loomSuccess) << loomCommGetLastError(ctx.comm);
    EXPECT_EQ(out, 2);
  });
}

// Threads with communicators of their own (split from one) never get in
// each other's way, however their calls interleave.
TEST_P(ConcurrentUseTest, OwnCommunicatorsPerThreadStayIndependent) {
  runRanks(GetParam(), 2, [&](const RankContext& ctx) {
    std::vector<loomComm_t> comms(2);
    ASSERT_EQ(loomCommSplit(ctx.comm, 0, ctx.rank, &comms[0], nullptr), loomSuccess);
    ASSERT_EQ(loomCommSplit(ctx.comm, 0, ctx.rank, &comms[1], nullptr), loomSuccess);
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 200; ++i) {
          int32_t in = (ctx.rank + 1) * (t + 1) * i, out = -1;
          if (loomAllReduce(&in, &out, 1, loomInt32, loomSum, comms[t], nullptr, nullptr) != loomSuccess ||
              out != 3 * (t + 1) * i)
            wrong.fetch_add(1);
        }
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(wrong.load(), 0);
    for (loomComm_t comm : comms) EXPECT_EQ(loomCommDestroy(comm), loomSuccess);
  });
}

INSTANTIATE_TEST_SUITE_P(Modes, ConcurrentUseTest, ::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                         [](const auto& info) { return modeName(info.param); });

}  // namespace
}  // namespace loom::test

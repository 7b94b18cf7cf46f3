// Async handles: operations in flight together and waited in any order,
// waits that time out and then succeed, and a rank that never arrives.
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "support/rank_harness.h"
#include "support/scoped_env.h"

namespace loom::test {
namespace {

class AsyncTest : public ::testing::TestWithParam<RankMode> {};

TEST_P(AsyncTest, ManyInFlightWaitedInReverseOrder) {
  runRanks(GetParam(), 4, [](const RankContext& ctx) {
    constexpr int kOps = 8;
    constexpr size_t kCount = 300001;  // several slots per op
    std::vector<std::vector<int32_t>> send(kOps, std::vector<int32_t>(kCount)),
        recv(kOps, std::vector<int32_t>(kCount));
    std::vector<loomRequest_t> requests(kOps);
    for (int op = 0; op < kOps; ++op) {
      for (size_t i = 0; i < kCount; ++i) send[op][i] = static_cast<int32_t>(ctx.rank * 1000 + op * 10 + i % 7);
      ASSERT_EQ(
          loomAllReduce(send[op].data(), recv[op].data(), kCount, loomInt32, loomSum, ctx.comm, nullptr, &requests[op]),
          loomSuccess);
    }
    for (int op = kOps - 1; op >= 0; --op) {
      ASSERT_EQ(loomWait(requests[op], -1), loomSuccess) << loomCommGetLastError(ctx.comm);
      EXPECT_EQ(loomRequestFree(requests[op]), loomSuccess);
      // sum over ranks r of (1000 r + 10 op + i%7) = 1000*6 + 4*(10 op + i%7)
      for (size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(recv[op][i], 6000 + 4 * (op * 10 + static_cast<int32_t>(i % 7))) << "op " << op << " element " << i;
    }
  });
}

TEST_P(AsyncTest, WaitTimesOutThenSucceeds) {
  // Rank 1 calls only once rank 0 has seen its operation not done: a flag
  // in memory the ranks share, as threads or as forked processes.
  void* page = mmap(nullptr, sizeof(std::atomic<bool>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto* rank0Waited = new (page) std::atomic<bool>(false);
  runRanks(GetParam(), 2, [rank0Waited](const RankContext& ctx) {
    int64_t value = ctx.rank + 1, result = 0;
    if (ctx.rank == 1) {  // late on purpose, for 30 s at most
      const auto start = std::chrono::steady_clock::now();
      while (!rank0Waited->load() && std::chrono::steady_clock::now() - start < std::chrono::seconds(30))
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    loomRequest_t request = nullptr;
    ASSERT_EQ(loomAllReduce(&value, &result, 1, loomInt64, loomSum, ctx.comm, nullptr, &request), loomSuccess);
    if (ctx.rank == 0) {
      EXPECT_EQ(loomWait(request, 20), loomTimeout) << "rank 1 has not called yet";
      int done = 1;
      EXPECT_EQ(loomTest(request, &done), loomSuccess);
      EXPECT_EQ(done, 0);
      rank0Waited->store(true);
    }
    EXPECT_EQ(loomWait(request, -1), loomSuccess) << loomCommGetLastError(ctx.comm);
    EXPECT_EQ(result, 3);
    int done = 0;
    EXPECT_EQ(loomTest(request, &done), loomSuccess);
    EXPECT_EQ(done, 1);
    EXPECT_EQ(loomRequestFree(request), loomSuccess);
  });
  munmap(page, sizeof(std::atomic<bool>));
}

TEST_P(AsyncTest, FreeingAPendingRequestStillCompletesTheOperation) {
  runRanks(GetParam(), 3, [](const RankContext& ctx) {
    std::vector<float> data(100003, static_cast<float>(ctx.rank)), out(100003, -1.0f);
    loomRequest_t request = nullptr;
    ASSERT_EQ(loomAllReduce(data.data(), out.data(), data.size(), loomFloat32, loomMax, ctx.comm, nullptr, &request),
              loomSuccess);
    EXPECT_EQ(loomRequestFree(request), loomSuccess);
    // Issue order: the barrier completes after the freed AllReduce did.
    EXPECT_EQ(loomBarrier(ctx.comm, nullptr), loomSuccess);
    for (float v : out) ASSERT_EQ(v, 2.0f);
  });
}

TEST_P(AsyncTest, RankThatNeverArrivesIsNamedInTheTimeout) {
  HarnessOptions options;
  options.timeoutMs = 500;
  runRanks(
      GetParam(), 3,
      [](const RankContext& ctx) {
        int32_t value = 1, result = 0;
        if (ctx.rank == 2) {
          // Never calls the collective; stays alive past the others' timeout.
          std::this_thread::sleep_for(std::chrono::milliseconds(2500));
          return;
        }
        loomResult_t rc = loomAllReduce(&value, &result, 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr);
        // Either this rank timed out itself, or its neighbour did first and
        // announced it: both sentences must name rank 2 as not arrived.
        EXPECT_TRUE(rc == loomTimeout || rc == loomRemoteError) << loomGetErrorString(rc);
        std::string sentence = loomCommGetLastError(ctx.comm);
        EXPECT_NE(sentence.find("AllReduce #1"), std::string::npos) << sentence;
        EXPECT_NE(sentence.find("have not started collective 1 of this communicator: 2 (has started 0)"),
                  std::string::npos)
            << sentence;
        // The communicator is now broken: later operations say so at once.
        EXPECT_EQ(loomAllReduce(&value, &result, 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr), loomInvalidUsage);
        EXPECT_NE(std::string(loomCommGetLastError(ctx.comm)).find("failed earlier"), std::string::npos);
      },
      options);
}

TEST_P(AsyncTest, AbortReturnsPromptlyAndFailsPendingWaits) {
  runRanks(
      GetParam(), 2,
      [](const RankContext& ctx) {
        if (ctx.rank == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // never joins
          return;
        }
        int32_t value = 1, result = 0;
        loomRequest_t first = nullptr, second = nullptr;
        ASSERT_EQ(loomAllReduce(&value, &result, 1, loomInt32, loomSum, ctx.comm, nullptr, &first), loomSuccess);
        ASSERT_EQ(loomAllReduce(&value, &result, 1, loomInt32, loomSum, ctx.comm, nullptr, &second), loomSuccess);
        loomResult_t waited = loomSuccess;
        std::thread waiter([&] { waited = loomWait(first, -1); });
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        auto start = std::chrono::steady_clock::now();
        ASSERT_EQ(loomCommAbort(ctx.comm), loomSuccess);
        *ctx.commReleased = true;
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        waiter.join();
        // The contract is one second; the margin absorbs a loaded CI machine.
        EXPECT_LT(seconds, 3.0);
        EXPECT_EQ(waited, loomAborted);
        EXPECT_EQ(loomWait(second, 0), loomAborted);
        loomRequestFree(first);
        loomRequestFree(second);
        EXPECT_EQ(loomAllReduce(&value, &result, 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr), loomInvalidUsage);
      },
      [] {
        HarnessOptions o;
        o.timeoutMs = 60000;
        return o;
      }());
}

TEST_P(AsyncTest, MismatchedCallIsNamedInsteadOfHanging) {
  HarnessOptions options;
  options.timeoutMs = 60000;  // far longer than the test: the mismatch must be named, not timed out
  runRanks(
      GetParam(), 2,
      [](const RankContext& ctx) {
        // Rank 1 passes twice the count.
        const size_t count = ctx.rank == 0 ? (1 << 20) : (2 << 20);
        std::vector<float> data(count, 1.0f);
        auto start = std::chrono::steady_clock::now();
        loomResult_t rc =
            loomAllReduce(data.data(), data.data(), count, loomFloat32, loomSum, ctx.comm, nullptr, nullptr);
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        // Both ranks find the other's call on the first message they receive.
        {
          EXPECT_EQ(rc, loomInvalidUsage) << loomGetErrorString(rc);
          const std::string theirs = ctx.rank == 0 ? "2097152" : "1048576",
                            mine = ctx.rank == 0 ? "1048576" : "2097152";
          std::string sentence = loomCommGetLastError(ctx.comm);
          EXPECT_NE(sentence.find("does not match rank " + std::to_string(1 - ctx.rank) +
                                  ": that rank called AllReduce #1 of " + theirs +
                                  " float32 (sum), this rank AllReduce #1 of " + mine + " float32 (sum)"),
                    std::string::npos)
              << sentence;
          EXPECT_LT(seconds, 30.0) << "named only after " << seconds << " s";
        }
        // The communicator is broken now: later calls say so at once.
        int32_t one = 1, sum = 0;
        EXPECT_EQ(loomAllReduce(&one, &sum, 1, loomInt32, loomSum, ctx.comm, nullptr, nullptr), loomInvalidUsage);
      },
      options);
}

// A message left over from a mismatched call is never read by the next one:
// its label names the call it belongs to. Here rank 1 sends more than rank
// 0 reads and rank 0's next call finds the surplus.
TEST_P(AsyncTest, LeftoverMessageOfAMismatchedCallIsNotReadByTheNext) {
  HarnessOptions options;
  options.timeoutMs = 60000;
  runRanks(
      GetParam(), 2,
      [](const RankContext& ctx) {
        constexpr size_t kCount = 100;
        std::vector<float> data(ctx.rank == 0 ? kCount : 2 * kCount, 1.0f);
        // Rank 1 sends twice what rank 0 receives: no one waits, so the
        // Sends and the Recv all complete.
        if (ctx.rank == 1) {
          ASSERT_EQ(loomSend(data.data(), kCount, loomFloat32, 0, ctx.comm, nullptr, nullptr), loomSuccess);
          ASSERT_EQ(loomSend(data.data() + kCount, kCount, loomFloat32, 0, ctx.comm, nullptr, nullptr), loomSuccess);
          return;
        }
        ASSERT_EQ(loomRecv(data.data(), kCount, loomFloat32, 1, ctx.comm, nullptr, nullptr), loomSuccess);
        // A Recv of another size then finds message #2, a Send of 100.
        std::vector<int32_t> other(7);
        EXPECT_EQ(loomRecv(other.data(), other.size(), loomInt32, 1, ctx.comm, nullptr, nullptr), loomInvalidUsage);
        std::string sentence = loomCommGetLastError(ctx.comm);
        EXPECT_NE(sentence.find("message #2 from rank 1 is a Send of 100 float32, but this Recv expects 7 int32"),
                  std::string::npos)
            << sentence;
      },
      options);
}

// The single-copy path swaps buffer addresses first; mismatched counts are
// caught there, on both ranks, before either reads a peer's buffer past its end.
TEST_P(AsyncTest, MismatchedCallOnTheDirectPathFailsOnEveryRank) {
  ScopedEnv cma("LOOM_CMA", "1");
  ScopedEnv force("LOOM_ALGO", "direct");
  HarnessOptions options;
  options.timeoutMs = 60000;
  runRanks(
      GetParam(), 2,
      [](const RankContext& ctx) {
        const size_t count = ctx.rank == 0 ? 1000 : 3000;
        std::vector<float> send(count, 1.0f), recv(count * ctx.nranks, 0.0f);
        auto start = std::chrono::steady_clock::now();
        loomResult_t rc = loomAllGather(send.data(), recv.data(), count, loomFloat32, ctx.comm, nullptr, nullptr);
        double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        EXPECT_EQ(rc, loomInvalidUsage) << loomGetErrorString(rc);
        const int peer = 1 - ctx.rank;
        std::string sentence = loomCommGetLastError(ctx.comm);
        std::string theirs = "AllGather #1 of " + std::to_string(peer == 0 ? 1000 : 3000) + " float32";
        std::string mine = "AllGather #1 of " + std::to_string(count) + " float32";
        EXPECT_NE(sentence.find("does not match rank " + std::to_string(peer) + ": that rank called " + theirs +
                                ", this rank " + mine),
                  std::string::npos)
            << sentence;
        EXPECT_LT(seconds, 30.0) << "named only after " << seconds << " s";
      },
      options);
}

// What a callback saw: how often it ran, on which thread, with what.
struct CallbackRecord {
  std::atomic<int> calls{0};
  std::atomic<loomResult_t> result{loomInProgress};
  std::thread::id thread;
  std::string sentence;  // loomWait(request, 0)'s, read inside the callback
};

void recordCallback(loomRequest_t request, loomResult_t result, void* userData) {
  auto* record = static_cast<CallbackRecord*>(userData);
  record->thread = std::this_thread::get_id();
  if (result != loomSuccess && loomWait(request, 0) == result) record->sentence = loomGetLastError();
  record->result = result;
  record->calls.fetch_add(1);
}

bool waitForCalls(const CallbackRecord& record, int calls) {
  for (int i = 0; i < 30000 && record.calls.load() < calls; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return record.calls.load() >= calls;
}

// Nobody waits: the progress thread ends the operation and runs the
// callback, once, with the result already in the output.
TEST_P(AsyncTest, CallbackRunsOnceWhenTheOperationEndsWithoutAWait) {
  runRanks(GetParam(), 3, [](const RankContext& ctx) {
    std::vector<int32_t> send(100003, ctx.rank + 1), recv(send.size(), 0);
    CallbackRecord record;
    loomRequest_t request = nullptr;
    ASSERT_EQ(loomAllReduce(send.data(), recv.data(), send.size(), loomInt32, loomSum, ctx.comm, nullptr, &request),
              loomSuccess);
    ASSERT_EQ(loomRequestSetCallback(request, recordCallback, &record), loomSuccess);
    ASSERT_TRUE(waitForCalls(record, 1)) << "the callback never ran";
    EXPECT_EQ(record.result.load(), loomSuccess);
    for (size_t i = 0; i < recv.size(); ++i) ASSERT_EQ(recv[i], 6) << i;
    EXPECT_EQ(loomWait(request, -1), loomSuccess);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(record.calls.load(), 1);
    // A second callback is refused, and the first is not run again.
    CallbackRecord second;
    EXPECT_EQ(loomRequestSetCallback(request, recordCallback, &second), loomInvalidUsage);
    EXPECT_NE(std::string(loomGetLastError()).find("this request has a callback already"), std::string::npos);
    EXPECT_EQ(second.calls.load(), 0);
    EXPECT_EQ(record.calls.load(), 1);
    EXPECT_EQ(loomRequestFree(request), loomSuccess);
  });
}

// Set on an operation that has ended, it runs on the caller, before the
// call returns.
TEST_P(AsyncTest, CallbackOnAnEndedOperationRunsAtOnceOnTheCaller) {
  runRanks(GetParam(), 2, [](const RankContext& ctx) {
    int64_t value = ctx.rank + 1, result = 0;
    loomRequest_t request = nullptr;
    ASSERT_EQ(loomAllReduce(&value, &result, 1, loomInt64, loomSum, ctx.comm, nullptr, &request), loomSuccess);
    ASSERT_EQ(loomWait(request, -1), loomSuccess);
    CallbackRecord record;
    ASSERT_EQ(loomRequestSetCallback(request, recordCallback, &record), loomSuccess);
    EXPECT_EQ(record.calls.load(), 1);
    EXPECT_EQ(record.thread, std::this_thread::get_id());
    EXPECT_EQ(result, 3);
    EXPECT_EQ(loomRequestSetCallback(nullptr, recordCallback, &record), loomInvalidArgument);
    EXPECT_EQ(loomRequestSetCallback(request, nullptr, &record), loomInvalidArgument);
    EXPECT_EQ(loomRequestFree(request), loomSuccess);
  });
}

// A failed operation's callback gets its code, and can read its sentence.
TEST_P(AsyncTest, CallbackOfAFailedOperationGetsItsSentence) {
  runRanks(GetParam(), 2, [](const RankContext& ctx) {
    const size_t count = ctx.rank == 0 ? 10 : 12;
    std::vector<float> data(count, 1.0f);
    CallbackRecord record;
    loomRequest_t request = nullptr;
    ASSERT_EQ(loomAllReduce(data.data(), data.data(), count, loomFloat32, loomSum, ctx.comm, nullptr, &request),
              loomSuccess);
    ASSERT_EQ(loomRequestSetCallback(request, recordCallback, &record), loomSuccess);
    EXPECT_EQ(loomWait(request, -1), loomInvalidUsage);
    ASSERT_TRUE(waitForCalls(record, 1));
    EXPECT_EQ(record.result.load(), loomInvalidUsage);
    EXPECT_NE(record.sentence.find("does not match rank " + std::to_string(1 - ctx.rank)), std::string::npos)
        << record.sentence;
    EXPECT_EQ(loomRequestFree(request), loomSuccess);
  });
}

// A watchdog's view: healthy until an operation nobody waits on fails, then
// that failure's code and sentence, read from another thread.
TEST_P(AsyncTest, AsyncErrorShowsAFailureNobodyWaitedFor) {
  runRanks(GetParam(), 2, [](const RankContext& ctx) {
    loomResult_t asyncError = loomInternalError;
    ASSERT_EQ(loomCommGetAsyncError(ctx.comm, &asyncError), loomSuccess);
    EXPECT_EQ(asyncError, loomSuccess);
    EXPECT_EQ(loomCommGetAsyncError(ctx.comm, nullptr), loomInvalidArgument);
    EXPECT_EQ(loomCommGetAsyncError(nullptr, &asyncError), loomInvalidArgument);

    const size_t count = ctx.rank == 0 ? 10 : 12;  // a mismatch, found by the progress thread
    std::vector<float> data(count, 1.0f);
    loomRequest_t request = nullptr;
    ASSERT_EQ(loomAllReduce(data.data(), data.data(), count, loomFloat32, loomSum, ctx.comm, nullptr, &request),
              loomSuccess);
    std::thread watchdog([&] {
      for (int i = 0; i < 30000; ++i) {
        if (loomCommGetAsyncError(ctx.comm, &asyncError) != loomSuccess || asyncError != loomSuccess) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    watchdog.join();
    EXPECT_EQ(asyncError, loomInvalidUsage);
    EXPECT_NE(std::string(loomCommGetLastError(ctx.comm)).find("does not match rank " + std::to_string(1 - ctx.rank)),
              std::string::npos)
        << loomCommGetLastError(ctx.comm);
    EXPECT_EQ(loomRequestFree(request), loomSuccess);
  });
}

INSTANTIATE_TEST_SUITE_P(Modes, AsyncTest, ::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                         [](const auto& info) { return modeName(info.param); });

}  // namespace
}  // namespace loom::test

// Groups as ncclGroupStart/ncclGroupEnd (loom.h, above loomGroupStart): the
// calls a thread makes between loomGroupStart and the outermost
// loomGroupEnd are checked at once and launched together, so blocking
// Sends and Recvs that would deadlock one after the other complete inside a
// group; calls with requests return their handles at once; groups nest; and
// loomGroupEnd reports the first failure of a blocking call, naming it.
// Message contents are a formula of the sending rank, a message number and
// the element index, checked element by element.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/p2p_messages.h"
#include "support/rank_harness.h"

namespace loom::test {
namespace {

// ---- Groups --------------------------------------------------------------------

bool groupStart(const std::string& what) {
  const loomResult_t rc = loomGroupStart();
  EXPECT_EQ(rc, loomSuccess) << what << ": loomGroupStart: " << loomGetErrorString(rc) << ": " << loomGetLastError();
  return rc == loomSuccess;
}

// Ends a group that must succeed. On failure the communicator is aborted
// before the caller returns and frees the group's buffers: nothing the
// group launched can then write into freed memory.
bool groupEnd(const RankContext& ctx, const std::string& what) {
  const loomResult_t rc = loomGroupEnd();
  if (rc == loomSuccess) return true;
  ADD_FAILURE() << what << ": loomGroupEnd: " << loomGetErrorString(rc) << ": " << loomGetLastError()
                << " (communicator: " << loomCommGetLastError(ctx.comm) << ")";
  if (!*ctx.commReleased) {
    loomCommAbort(ctx.comm);
    *ctx.commReleased = true;
  }
  return false;
}

// A blocking call inside a group returns loomSuccess at once.
void inGroup(loomResult_t rc, const RankContext& ctx, const std::string& what) {
  EXPECT_EQ(rc, loomSuccess) << what << " inside a group: " << loomGetErrorString(rc) << ": "
                             << loomCommGetLastError(ctx.comm);
}
void sendInGroup(const RankContext& ctx, const Message& m, int peer, int msg) {
  inGroup(loomSend(m.data(), m.count(), m.dtype(), peer, ctx.comm, nullptr, nullptr), ctx,
          describe("blocking Send", m, "to", peer, msg, ctx.rank));
}
void recvInGroup(const RankContext& ctx, Message& m, int peer, int msg) {
  inGroup(loomRecv(m.data(), m.count(), m.dtype(), peer, ctx.comm, nullptr, nullptr), ctx,
          describe("blocking Recv", m, "from", peer, msg, ctx.rank));
}

std::string caseName(const RankContext& ctx, int msg) {
  return "rank " + std::to_string(ctx.rank) + ", case " + std::to_string(msg);
}

class GroupTest : public ::testing::TestWithParam<std::tuple<RankMode, int>> {
 protected:
  RankMode mode() const { return std::get<0>(GetParam()); }
  int nranks() const { return std::get<1>(GetParam()); }
};

// Blocking Send to next, then blocking Recv from prev, on every rank: one
// after the other this deadlocks once a message outgrows the FIFO; in a
// group both are launched together and complete by loomGroupEnd.
TEST_P(GroupTest, GroupedSendRecvRing) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx);
        int msg = 0;
        for (loomDataType_t dtype : {loomFloat64, loomInt8}) {
          for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, largeCount(dtype, kLargeBytes)}) {
            ++msg;
            Message in = Message::incoming(dtype, count, msg % 3);
            const Message out = Message::outgoing(dtype, count, ctx.rank, msg, (msg + 1) % 3);
            if (!groupStart(caseName(ctx, msg))) return;
            sendInGroup(ctx, out, next, msg);
            recvInGroup(ctx, in, prev, msg);
            if (!groupEnd(ctx, caseName(ctx, msg))) return;
            in.expectFrom(prev, msg, describe("Recv", in, "from", prev, msg, ctx.rank));
          }
        }
      },
      options());
}

// AllToAll as PyTorch's batch_isend_irecv and NCCL's examples build it: in
// one group, every rank sends a distinct block to every peer and receives
// one from every peer, all blocking calls. First all Sends then all Recvs,
// then each peer's Send and Recv side by side.
TEST_P(GroupTest, AllToAllViaGroupedP2P) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        int caseNumber = 0;
        const size_t large = largeCount(loomInt32, kLargePairBytes);
        for (size_t count : {size_t{1}, size_t{1000}, large}) {
          for (bool sendsFirst : {true, false}) {
            if (count == large && !sendsFirst) continue;  // once is enough, and it moves the most data
            ++caseNumber;
            // Block for rank d is message caseNumber * 64 + d.
            auto msgTo = [&](int dest) { return caseNumber * 64 + dest; };
            std::vector<Message> outs, ins;
            for (int peer = 0; peer < ctx.nranks; ++peer) {
              outs.push_back(Message::outgoing(loomInt32, count, ctx.rank, msgTo(peer), peer % 3));
              ins.push_back(Message::incoming(loomInt32, count, (peer + 1) % 3));
            }
            if (!groupStart(caseName(ctx, caseNumber))) return;
            if (sendsFirst) {
              for (int step = 1; step < ctx.nranks; ++step) {
                const int peer = (ctx.rank + step) % ctx.nranks;
                sendInGroup(ctx, outs[peer], peer, msgTo(peer));
              }
              for (int step = 1; step < ctx.nranks; ++step) {
                const int peer = (ctx.rank + ctx.nranks - step) % ctx.nranks;
                recvInGroup(ctx, ins[peer], peer, msgTo(ctx.rank));
              }
            } else {
              for (int peer = 0; peer < ctx.nranks; ++peer) {
                if (peer == ctx.rank) continue;
                sendInGroup(ctx, outs[peer], peer, msgTo(peer));
                recvInGroup(ctx, ins[peer], peer, msgTo(ctx.rank));
              }
            }
            if (!groupEnd(ctx, caseName(ctx, caseNumber))) return;
            for (int peer = 0; peer < ctx.nranks; ++peer)
              if (peer != ctx.rank)
                ins[peer].expectFrom(peer, msgTo(ctx.rank),
                                     describe("Recv", ins[peer], "from", peer, msgTo(ctx.rank), ctx.rank));
          }
        }
      },
      options());
}

// An inner loomGroupEnd launches nothing and does not block: the blocking
// Send in the inner group (several MiB, more than the FIFO) can only
// complete once the Recv after it is launched with it by the outermost End.
// Then three levels, the Recv in the outermost one.
TEST_P(GroupTest, NestedGroupsLaunchOnlyAtOutermostEnd) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx);
        int msg = 0;
        for (size_t count : {size_t{1000}, largeCount(loomFloat32, kLargeBytes)}) {
          {
            ++msg;
            const std::string what = caseName(ctx, msg);
            Message in = Message::incoming(loomFloat32, count, 1);
            const Message out = Message::outgoing(loomFloat32, count, ctx.rank, msg, 2);
            if (!groupStart(what)) return;
            if (!groupStart(what + ", inner")) return;
            sendInGroup(ctx, out, next, msg);
            EXPECT_EQ(loomGroupEnd(), loomSuccess) << what << ": inner loomGroupEnd: " << loomGetLastError();
            recvInGroup(ctx, in, prev, msg);
            if (!groupEnd(ctx, what + ", outer")) return;
            in.expectFrom(prev, msg, describe("Recv", in, "from", prev, msg, ctx.rank));
          }
          {
            ++msg;
            const std::string what = caseName(ctx, msg);
            Message in = Message::incoming(loomFloat32, count, 0);
            const Message out = Message::outgoing(loomFloat32, count, ctx.rank, msg, 1);
            if (!groupStart(what)) return;
            recvInGroup(ctx, in, prev, msg);
            if (!groupStart(what + ", level 2")) return;
            if (!groupStart(what + ", level 3")) return;
            sendInGroup(ctx, out, next, msg);
            EXPECT_EQ(loomGroupEnd(), loomSuccess) << what << ": level 3 loomGroupEnd: " << loomGetLastError();
            EXPECT_EQ(loomGroupEnd(), loomSuccess) << what << ": level 2 loomGroupEnd: " << loomGetLastError();
            if (!groupEnd(ctx, what + ", outermost")) return;
            in.expectFrom(prev, msg, describe("Recv", in, "from", prev, msg, ctx.rank));
          }
        }
      },
      options());
}

// Calls with requests inside a group return their handles at once, and a
// Recv's is not done before the group is launched. Mixed with a blocking
// Send: once loomGroupEnd returns that Send is complete, so its buffer may
// be overwritten while the peer's Recv for it is still only a request.
TEST_P(GroupTest, RequestsInsideAGroup) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx);
        int msg = 0;
        for (size_t count : {size_t{7}, largeCount(loomInt64, kLargeBytes)}) {
          const int first = ++msg, second = ++msg;
          const std::string what = caseName(ctx, first);
          Message inFirst = Message::incoming(loomInt64, count, 1);
          Message inSecond = Message::incoming(loomInt64, count, 2);
          const Message outFirst = Message::outgoing(loomInt64, count, ctx.rank, first, 0);
          Message outSecond = Message::outgoing(loomInt64, count, ctx.rank, second, 1);
          InFlight flight(ctx.comm, ctx.commReleased);
          if (!groupStart(what)) return;
          const size_t recvFirst = flight.postRecv(inFirst, prev, first, ctx.rank);
          flight.postSend(outFirst, next, first, ctx.rank);
          sendInGroup(ctx, outSecond, next, second);
          flight.postRecv(inSecond, prev, second, ctx.rank);
          if (flight.request(recvFirst) != nullptr) {
            int done = 1;
            // Whether loomTest may be called before the group is launched is
            // not said; if it answers, the Recv cannot be done yet.
            if (loomTest(flight.request(recvFirst), &done) == loomSuccess) {
              EXPECT_EQ(done, 0) << what << ": a Recv inside a group was done before loomGroupEnd";
            }
          }
          if (!groupEnd(ctx, what)) return;
          // The blocking Send is complete: its buffer is the caller's again.
          outSecond.fill(ctx.rank, 999);
          flight.waitAll();
          if (!flight.ok()) return;
          inFirst.expectFrom(prev, first, describe("Recv", inFirst, "from", prev, first, ctx.rank));
          inSecond.expectFrom(prev, second, describe("Recv", inSecond, "from", prev, second, ctx.rank));
        }
      },
      options());
}

// Blocking collectives inside a group are complete, with their results,
// when loomGroupEnd returns; then collectives and Sends/Recvs in one group.
TEST_P(GroupTest, CollectivesInsideAGroup) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx), root = ctx.nranks - 1;
        {
          const std::string what = caseName(ctx, 1);
          const std::vector<int32_t> smallIn = allReduceInputs(ctx.rank, 1000),
                                     largeIn = allReduceInputs(ctx.rank, 300007);
          std::vector<int32_t> smallOut(smallIn.size(), -1), largeOut(largeIn.size(), -1);
          const Message broadcastIn = Message::outgoing(loomFloat64, 1000, ctx.rank, 1, 1);
          Message broadcastOut = Message::incoming(loomFloat64, 1000, 2);
          if (!groupStart(what)) return;
          inGroup(loomAllReduce(smallIn.data(), smallOut.data(), smallIn.size(), loomInt32, loomSum, ctx.comm, nullptr,
                                nullptr),
                  ctx, what + ": AllReduce of 1000 int32");
          inGroup(loomAllReduce(largeIn.data(), largeOut.data(), largeIn.size(), loomInt32, loomSum, ctx.comm, nullptr,
                                nullptr),
                  ctx, what + ": AllReduce of 300007 int32");
          inGroup(loomBroadcast(broadcastIn.data(), broadcastOut.data(), 1000, loomFloat64, root, ctx.comm, nullptr,
                                nullptr),
                  ctx, what + ": Broadcast");
          if (!groupEnd(ctx, what)) return;
          expectAllReduceSum(smallOut, ctx.nranks, what + ": AllReduce of 1000 int32");
          expectAllReduceSum(largeOut, ctx.nranks, what + ": AllReduce of 300007 int32");
          broadcastOut.expectFrom(root, 1, what + ": Broadcast from rank " + std::to_string(root));
        }
        {
          const std::string what = caseName(ctx, 2);
          const std::vector<int32_t> reduceIn = allReduceInputs(ctx.rank, 300007);
          std::vector<int32_t> reduceOut(reduceIn.size(), -1);
          const size_t count = largeCount(loomFloat64, kLargeBytes);
          Message in = Message::incoming(loomFloat64, count, 0);
          const Message out = Message::outgoing(loomFloat64, count, ctx.rank, 2, 1);
          if (!groupStart(what)) return;
          sendInGroup(ctx, out, next, 2);
          inGroup(loomAllReduce(reduceIn.data(), reduceOut.data(), reduceIn.size(), loomInt32, loomSum, ctx.comm,
                                nullptr, nullptr),
                  ctx, what + ": AllReduce");
          recvInGroup(ctx, in, prev, 2);
          if (!groupEnd(ctx, what)) return;
          expectAllReduceSum(reduceOut, ctx.nranks, what + ": AllReduce");
          in.expectFrom(prev, 2, describe("Recv", in, "from", prev, 2, ctx.rank));
        }
      },
      options());
}

// A group's calls may use several communicators: here the world one and a
// split of it in reverse rank order, a blocking Send/Recv ring on each.
TEST_P(GroupTest, GroupSpansTwoCommunicators) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        loomComm_t reversed = nullptr;
        ASSERT_EQ(loomCommSplit(ctx.comm, 0, ctx.nranks - ctx.rank, &reversed, nullptr), loomSuccess)
            << "rank " << ctx.rank << ": loomCommSplit: " << loomCommGetLastError(ctx.comm);
        ASSERT_NE(reversed, nullptr);
        int reversedRank = -1;
        EXPECT_EQ(loomCommUserRank(reversed, &reversedRank), loomSuccess);
        EXPECT_EQ(reversedRank, ctx.nranks - 1 - ctx.rank) << "key nranks - rank orders the split in reverse";
        // In the reversed communicator, rank q is world rank nranks - 1 - q.
        const int n = ctx.nranks;
        const int nextRev = (reversedRank + 1) % n, prevRev = (reversedRank + n - 1) % n;
        const int prevRevWorld = n - 1 - prevRev;
        const int next = nextOf(ctx), prev = prevOf(ctx);
        bool released = false;
        int msg = 0;
        for (size_t count : {size_t{1000}, largeCount(loomInt32, kLargeBytes)}) {
          const int msgWorld = ++msg, msgRev = ++msg;
          const std::string what = caseName(ctx, msgWorld);
          Message inWorld = Message::incoming(loomInt32, count, 1), inRev = Message::incoming(loomInt32, count, 2);
          const Message outWorld = Message::outgoing(loomInt32, count, ctx.rank, msgWorld, 0);
          const Message outRev = Message::outgoing(loomInt32, count, ctx.rank, msgRev, 1);
          if (!groupStart(what)) break;
          sendInGroup(ctx, outWorld, next, msgWorld);
          inGroup(loomSend(outRev.data(), count, loomInt32, nextRev, reversed, nullptr, nullptr), ctx,
                  what + ": Send on the reversed communicator");
          inGroup(loomRecv(inRev.data(), count, loomInt32, prevRev, reversed, nullptr, nullptr), ctx,
                  what + ": Recv on the reversed communicator");
          recvInGroup(ctx, inWorld, prev, msgWorld);
          const loomResult_t rc = loomGroupEnd();
          if (rc != loomSuccess) {
            ADD_FAILURE() << what << ": loomGroupEnd: " << loomGetErrorString(rc) << ": " << loomGetLastError();
            loomCommAbort(reversed);
            released = true;
            loomCommAbort(ctx.comm);
            *ctx.commReleased = true;
            return;
          }
          inWorld.expectFrom(prev, msgWorld, describe("Recv", inWorld, "from", prev, msgWorld, ctx.rank));
          inRev.expectFrom(
              prevRevWorld, msgRev,
              what + ": Recv on the reversed communicator from world rank " + std::to_string(prevRevWorld));
        }
        if (!released) {
          EXPECT_EQ(loomCommDestroy(reversed), loomSuccess) << "rank " << ctx.rank << ": " << loomGetLastError();
        }
      },
      options());
}

// A bad argument inside a group fails that call at once, with its
// sentence; it joins nothing, and the group's valid calls still complete.
TEST_P(GroupTest, BadArgumentInsideAGroupFailsTheCallItself) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx);
        const std::string what = caseName(ctx, 1);
        const size_t count = largeCount(loomUint8, kLargeBytes);
        Message in = Message::incoming(loomUint8, count, 1);
        const Message out = Message::outgoing(loomUint8, count, ctx.rank, 1, 0);
        if (!groupStart(what)) return;
        sendInGroup(ctx, out, next, 1);
        {
          const loomResult_t rc = loomSend(out.data(), count, loomUint8, ctx.nranks, ctx.comm, nullptr, nullptr);
          EXPECT_EQ(rc, loomInvalidArgument) << what << ": Send to peer nranks: " << loomGetErrorString(rc);
          const std::string sentence = loomGetLastError();
          EXPECT_NE(sentence.find("peer " + std::to_string(ctx.nranks)), std::string::npos) << sentence;
          EXPECT_NE(std::string(loomCommGetLastError(ctx.comm)).find("peer " + std::to_string(ctx.nranks)),
                    std::string::npos)
              << loomCommGetLastError(ctx.comm);
        }
        {
          const loomResult_t rc = loomRecv(in.data(), count, loomUint8, ctx.rank, ctx.comm, nullptr, nullptr);
          EXPECT_EQ(rc, loomInvalidArgument) << what << ": Recv from itself: " << loomGetErrorString(rc);
        }
        {
          const loomResult_t rc =
              loomSend(out.data(), count, static_cast<loomDataType_t>(42), next, ctx.comm, nullptr, nullptr);
          EXPECT_EQ(rc, loomInvalidArgument) << what << ": Send of dtype 42: " << loomGetErrorString(rc);
        }
        {
          // With a request too; what becomes of *request then is not said.
          loomRequest_t request = nullptr;
          const loomResult_t rc = loomRecv(in.data(), count, loomUint8, -1, ctx.comm, nullptr, &request);
          EXPECT_EQ(rc, loomInvalidArgument) << what << ": Recv from peer -1: " << loomGetErrorString(rc);
        }
        recvInGroup(ctx, in, prev, 1);
        if (!groupEnd(ctx, what)) return;
        in.expectFrom(prev, 1, describe("Recv", in, "from", prev, 1, ctx.rank));
        // The communicator still works after the refused calls.
        const std::vector<int32_t> reduceIn = allReduceInputs(ctx.rank, 1000);
        std::vector<int32_t> reduceOut(reduceIn.size(), -1);
        EXPECT_EQ(loomAllReduce(reduceIn.data(), reduceOut.data(), reduceIn.size(), loomInt32, loomSum, ctx.comm,
                                nullptr, nullptr),
                  loomSuccess)
            << loomCommGetLastError(ctx.comm);
        expectAllReduceSum(reduceOut, ctx.nranks, what + ": AllReduce after the group");
      },
      options());
}

INSTANTIATE_TEST_SUITE_P(Ranks, GroupTest,
                         ::testing::Combine(::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                                            ::testing::Values(2, 3, 5, 8)),
                         [](const auto& info) {
                           return modeName(std::get<0>(info.param)) + std::to_string(std::get<1>(info.param));
                         });

// ---- Group state, without communicators ----------------------------------------

TEST(GroupUsageTest, GroupEndWithoutStartIsInvalidUsage) {
  EXPECT_EQ(loomGroupEnd(), loomInvalidUsage);
  EXPECT_STRNE(loomGetLastError(), "") << "the refusal has a sentence";
  // An empty group is fine, and each Start is matched by exactly one End.
  ASSERT_EQ(loomGroupStart(), loomSuccess) << loomGetLastError();
  EXPECT_EQ(loomGroupEnd(), loomSuccess) << loomGetLastError();
  EXPECT_EQ(loomGroupEnd(), loomInvalidUsage);
  ASSERT_EQ(loomGroupStart(), loomSuccess) << loomGetLastError();
  ASSERT_EQ(loomGroupStart(), loomSuccess) << loomGetLastError();
  EXPECT_EQ(loomGroupEnd(), loomSuccess) << loomGetLastError();
  EXPECT_EQ(loomGroupEnd(), loomSuccess) << loomGetLastError();
  EXPECT_EQ(loomGroupEnd(), loomInvalidUsage);
}

// "The calls a thread makes between them": a group is the thread's own.
TEST(GroupUsageTest, AGroupBelongsToTheThreadThatStartedIt) {
  ASSERT_EQ(loomGroupStart(), loomSuccess) << loomGetLastError();
  loomResult_t otherThread = loomSuccess;
  std::thread([&] { otherThread = loomGroupEnd(); }).join();
  EXPECT_EQ(otherThread, loomInvalidUsage) << "another thread ended this thread's group";
  EXPECT_EQ(loomGroupEnd(), loomSuccess) << loomGetLastError();
}

// ---- Failures inside a group ------------------------------------------------------

// Aborts comm if the guarded call has not returned within `ms`: a call that
// should have failed by its timeout then fails the test instead of hanging it.
class Watchdog {
 public:
  Watchdog(loomComm_t comm, int64_t ms)
      : thread_([this, comm, ms] {
          std::unique_lock<std::mutex> lock(mutex_);
          if (!wake_.wait_for(lock, std::chrono::milliseconds(ms), [this] { return disarmed_; })) {
            fired_ = true;
            ADD_FAILURE() << "still blocked after " << ms << " ms; aborting the communicator";
            loomCommAbort(comm);
          }
        }) {}
  ~Watchdog() { disarm(); }
  // Stops the watchdog; true if it had fired (the communicator is gone).
  bool disarm() {
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        disarmed_ = true;
      }
      wake_.notify_all();
      thread_.join();
    }
    return fired_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable wake_;
  bool disarmed_ = false;
  bool fired_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

HarnessOptions failureOptions() {
  HarnessOptions o;
  o.timeoutMs = 500;  // the communicators' timeout: the Recv below fails after half a second
  o.waitSeconds = 60;
  return o;
}

class GroupFailureTest : public ::testing::TestWithParam<RankMode> {};

// Rank 0's group holds a Send that rank 1 receives and a blocking Recv that
// rank 1 never sends: loomGroupEnd returns loomTimeout (the communicator's
// 500 ms), and its sentence names the Recv and rank 1. Rank 1 stays alive
// well past that timeout.
TEST_P(GroupFailureTest, FailureInsideAGroupIsReportedByGroupEndNamingTheOperation) {
  runRanks(
      GetParam(), 2,
      [](const RankContext& ctx) {
        const Message out = Message::outgoing(loomInt32, 10, ctx.rank, 1);
        Message in = Message::incoming(loomInt32, 1000);
        if (ctx.rank == 1) {
          Message got = Message::incoming(loomInt32, 10);
          EXPECT_EQ(loomRecv(got.data(), 10, loomInt32, 0, ctx.comm, nullptr, nullptr), loomSuccess)
              << loomCommGetLastError(ctx.comm);
          got.expectFrom(0, 1, "rank 1: Recv from rank 0");
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          return;
        }
        if (!groupStart("rank 0")) return;
        EXPECT_EQ(loomSend(out.data(), 10, loomInt32, 1, ctx.comm, nullptr, nullptr), loomSuccess);
        EXPECT_EQ(loomRecv(in.data(), 1000, loomInt32, 1, ctx.comm, nullptr, nullptr), loomSuccess)
            << "a blocking call inside a group returns at once";
        Watchdog watchdog(ctx.comm, 15000);
        const auto start = std::chrono::steady_clock::now();
        const loomResult_t rc = loomGroupEnd();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const std::string sentence = loomGetLastError();
        if (watchdog.disarm()) {
          *ctx.commReleased = true;
          return;
        }
        EXPECT_EQ(rc, loomTimeout) << loomGetErrorString(rc) << ": " << sentence;
        EXPECT_NE(sentence.find("Recv"), std::string::npos) << sentence;
        EXPECT_NE(sentence.find("rank 1"), std::string::npos) << sentence;
        EXPECT_LT(seconds, 10.0) << "the communicator's timeout is 500 ms";
      },
      failureOptions());
}

// The same failure through a request: loomGroupEnd (no blocking calls in
// the group) succeeds, and the request reports loomTimeout.
TEST_P(GroupFailureTest, FailedCallWithARequestReportsThroughItsRequest) {
  runRanks(
      GetParam(), 2,
      [](const RankContext& ctx) {
        if (ctx.rank == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          return;
        }
        Message in = Message::incoming(loomInt32, 1000);
        loomRequest_t request = nullptr;
        if (!groupStart("rank 0")) return;
        const loomResult_t posted = loomRecv(in.data(), 1000, loomInt32, 1, ctx.comm, nullptr, &request);
        EXPECT_EQ(posted, loomSuccess) << loomCommGetLastError(ctx.comm);
        Watchdog watchdog(ctx.comm, 15000);
        EXPECT_EQ(loomGroupEnd(), loomSuccess) << loomGetLastError();
        if (posted == loomSuccess && request != nullptr) {
          // Longer than the communicator's 500 ms, so the Recv's own failure answers.
          const loomResult_t rc = loomWait(request, 10000);
          EXPECT_EQ(rc, loomTimeout) << loomGetErrorString(rc) << ": " << loomCommGetLastError(ctx.comm);
          int done = 0;
          if (loomTest(request, &done) == loomSuccess && done == 0 && !watchdog.disarm()) {
            // Still running after 10 s: abort, so it cannot outlive `in`.
            ADD_FAILURE() << "the Recv did not fail by the communicator's 500 ms timeout";
            loomCommAbort(ctx.comm);
            *ctx.commReleased = true;
          }
          EXPECT_EQ(loomRequestFree(request), loomSuccess);
        }
        if (watchdog.disarm()) *ctx.commReleased = true;
      },
      failureOptions());
}

INSTANTIATE_TEST_SUITE_P(Modes, GroupFailureTest, ::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                         [](const auto& info) { return modeName(info.param); });

}  // namespace
}  // namespace loom::test

// Failures between ranks that reach each other over TCP: a rank killed on
// another (fake) host, and ranks whose calls differ. The survivors learn it
// from the closed connection or from the labels, and name the rank.
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "collectives/collectives.h"
#include "core/handles.h"
#include "support/rank_harness.h"
#include "support/scoped_env.h"

namespace loom::test {
namespace {

loomComm_t initOnHost(const RankContext& ctx, const std::string& host) {
  setenv("LOOM_HOST_ID", host.c_str(), 1);
  loomConfig_t config = LOOM_CONFIG_INITIALIZER;
  config.timeoutMs = 60000;  // failures must be seen, not timed out
  loomComm_t comm = nullptr;
  EXPECT_EQ(loomCommInitRank(&comm, ctx.nranks, *ctx.id, ctx.rank, &config), loomSuccess) << loomGetLastError();
  return comm;
}

// Hosts of two ranks each: rank 3 shares a host with rank 2 (shared memory)
// and reaches ranks 0 and 1 over TCP.
TEST(TcpFailureTest, RankKilledOnAnotherHostIsNamedByEverySurvivor) {
  HarnessOptions options;
  options.createComm = false;
  options.killedRank = 3;
  runRanks(
      RankMode::kProcesses, 4,
      [](const RankContext& ctx) {
        loomComm_t comm = initOnHost(ctx, "fake-host-" + std::to_string(ctx.rank / 2));
        ASSERT_NE(comm, nullptr);
        std::vector<float> in(1 << 18, 1.0f), out(1 << 18);
        if (ctx.rank == 3) {
          std::thread killer([] {
            std::this_thread::sleep_for(std::chrono::milliseconds(150));
            raise(SIGKILL);
          });
          for (;;) loomAllReduce(in.data(), out.data(), in.size(), loomFloat32, loomSum, comm, nullptr, nullptr);
        }
        const auto start = std::chrono::steady_clock::now();
        loomResult_t rc = loomSuccess;
        for (int i = 0; i < 100000 && rc == loomSuccess; ++i)
          rc = loomAllReduce(in.data(), out.data(), in.size(), loomFloat32, loomSum, comm, nullptr, nullptr);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        const std::string sentence = loomCommGetLastError(comm);
        EXPECT_EQ(rc, loomRemoteError) << loomGetErrorString(rc) << ": " << sentence;
        EXPECT_NE(sentence.find("rank 3 ("), std::string::npos) << sentence;
        EXPECT_LT(seconds, 30.0) << "noticed only after " << seconds << " s";
        EXPECT_EQ(loomCommAbort(comm), loomSuccess);
      },
      options);
}

// Every rank's labels travel in the TCP frames: a count that differs fails
// the first message on every rank, as over shared memory.
TEST(TcpFailureTest, MismatchedCountFailsEveryRankNamingBothCalls) {
  ScopedEnv tcp("LOOM_TRANSPORTS", "tcp");
  runRanks(RankMode::kProcesses, 3, [](const RankContext& ctx) {
    const size_t count = ctx.rank == 1 ? 300001 : 300000;
    std::vector<float> in(count, 1.0f), out(count);
    const loomResult_t rc =
        loomAllReduce(in.data(), out.data(), count, loomFloat32, loomSum, ctx.comm, nullptr, nullptr);
    const std::string sentence = loomCommGetLastError(ctx.comm);
    EXPECT_TRUE(rc == loomInvalidUsage || rc == loomRemoteError) << loomGetErrorString(rc) << ": " << sentence;
    EXPECT_NE(sentence.find("300001"), std::string::npos) << sentence;
    EXPECT_NE(sentence.find("300000"), std::string::npos) << sentence;
    EXPECT_EQ(loomCommAbort(ctx.comm), loomSuccess);
    *ctx.commReleased = true;
  });
}

// A frame carries its length and the receiving schedule knows what it
// reads: a message cut shorter than that (only a peer running other code
// could send one) fails the wait, naming the sender and both sizes, instead
// of being read with the slot's older bytes as its tail.
TEST(TcpFailureTest, AMessageShorterThanTheScheduleReadsFailsNamingTheSender) {
  ScopedEnv tcp("LOOM_TRANSPORTS", "tcp");
  runRanks(RankMode::kProcesses, 2, [](const RankContext& ctx) {
    CollectiveCall call;
    call.kind = OperationKind::kAllReduce;
    call.count = 32;
    call.dtype = loomFloat32;
    call.op = loomSum;
    std::string error;
    auto body = [&](const Team& team, const WaitContext& wait) -> Task<> {
      if (team.rank == 0) {
        SendConnection& to = team.sendTo(1);
        void* slot = co_await to.acquire(wait);
        std::memset(slot, 7, 100);
        to.post(100);
      } else {
        RecvConnection& from = team.recvFrom(0);
        co_await from.acquire(wait, 128);
        from.release();
      }
    };
    const loomResult_t rc = communicatorOf(ctx.comm)->run("Cut", &call, body, &error);
    if (ctx.rank == 0) {
      EXPECT_EQ(rc, loomSuccess) << error;
    } else {
      EXPECT_EQ(rc, loomRemoteError) << error;
      EXPECT_NE(error.find("received from rank 0 a message of 100 bytes where its schedule reads 128"),
                std::string::npos)
          << error;
    }
    EXPECT_EQ(loomCommAbort(ctx.comm), loomSuccess);
    *ctx.commReleased = true;
  });
}

// An abort flushes what the rank posted only briefly when a peer takes
// none of it. Heartbeats from a third rank, still waiting on others, used
// to count as progress there and kept the abort flushing for as long as
// that rank beat (here 30 s), and the close then waited 2 s more for a
// send queue that could not drain.
TEST(TcpFailureTest, AbortIsBriefWhileAPeerTakesNothingAndAnotherBeats) {
  ScopedEnv tcp("LOOM_TRANSPORTS", "tcp");
  struct Shared {
    std::atomic<bool> rank0Done{false};
  };
  void* page = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  Shared* shared = new (page) Shared();
  auto waitForRank0 = [shared](const std::function<void()>& meanwhile) {
    const auto start = std::chrono::steady_clock::now();
    while (!shared->rank0Done.load() && std::chrono::steady_clock::now() - start < std::chrono::seconds(30))
      meanwhile();
  };
  runRanks(RankMode::kProcesses, 3, [&](const RankContext& ctx) {
    if (ctx.rank == 0) {
      // More than rank 1's ring and both kernels' buffers hold: most of it
      // stays posted, as rank 1 posts no Recv.
      std::vector<char> big(64 << 20, 'x');
      loomRequest_t send = nullptr;
      ASSERT_EQ(loomSend(big.data(), big.size(), loomInt8, 1, ctx.comm, nullptr, &send), loomSuccess);
      EXPECT_EQ(loomWait(send, 500), loomTimeout);
      const auto start = std::chrono::steady_clock::now();
      EXPECT_EQ(loomCommAbort(ctx.comm), loomSuccess);
      *ctx.commReleased = true;
      EXPECT_EQ(loomRequestFree(send), loomSuccess);  // the last hold on the communicator, if the request is one
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      // 200 ms of flush, and as long again on the socket whose queue no
      // longer shrinks (rank 1 reads nothing): 0.4 s here. 2.2 s would mean
      // the close waited out its whole linger on that socket; 30 s, that
      // rank 2's heartbeats kept the flush going.
      EXPECT_LT(seconds, 2.0) << "the abort flushed for " << seconds << " s";
      shared->rank0Done.store(true);
    } else if (ctx.rank == 1) {
      waitForRank0([] { std::this_thread::sleep_for(std::chrono::milliseconds(10)); });
      EXPECT_EQ(loomCommAbort(ctx.comm), loomSuccess);
      *ctx.commReleased = true;
    } else {
      // Waiting on rank 1, which sends nothing: rank 2 beats to every peer.
      int32_t value = 0;
      loomRequest_t recv = nullptr;
      ASSERT_EQ(loomRecv(&value, 1, loomInt32, 1, ctx.comm, nullptr, &recv), loomSuccess);
      waitForRank0([recv] { loomWait(recv, 50); });
      EXPECT_EQ(loomCommAbort(ctx.comm), loomSuccess);
      *ctx.commReleased = true;
      loomRequestFree(recv);
    }
  });
  munmap(page, sizeof(Shared));
}

}  // namespace
}  // namespace loom::test

// Every way a communicator ends gives back what it took: file descriptors
// (rendezvous sockets, memfds, pidfds, the engine's wake-ups) and threads
// (the progress engine's, the rendezvous's). Ranks run as threads here, so
// one process's /proc/self shows everything the ranks hold.
#include <dirent.h>
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <barrier>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "support/rank_harness.h"
#include "support/scoped_env.h"

namespace loom::test {
namespace {

int entriesIn(const char* directory) {
  int count = 0;
  if (DIR* dir = opendir(directory)) {
    while (dirent* entry = readdir(dir))
      if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) ++count;
    closedir(dir);
  }
  return count;
}

struct Held {
  int descriptors;
  int threads;
  bool operator==(const Held& other) const = default;
};

Held heldNow() {
  // The directory's own descriptor is open while it is read: subtract it.
  return Held{entriesIn("/proc/self/fd") - 1, entriesIn("/proc/self/task")};
}

// A rendezvous thread ends once its last rank has hung up, a moment after
// the ranks return: give it a few seconds before calling it a leak.
Held heldOnceSettled(const Held& expected) {
  Held now = heldNow();
  for (int i = 0; i < 500 && !(now == expected); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    now = heldNow();
  }
  return now;
}

void allReduceOnce(loomComm_t comm) {
  int32_t in = 1, out = 0;
  ASSERT_EQ(loomAllReduce(&in, &out, 1, loomInt32, loomSum, comm, nullptr, nullptr), loomSuccess)
      << loomCommGetLastError(comm);
}

using Ending = std::function<void()>;

// Each way to end, run on 3 ranks as threads.
void destroyAfterWork() {
  runRanks(RankMode::kThreads, 3, [](const RankContext& ctx) { allReduceOnce(ctx.comm); });
}

void abortAfterWork() {
  // Every rank's AllReduce returns before any rank aborts: a rank whose own
  // call returned may still have bytes on their way to a peer (over TCP in
  // its send queue), and an abort then fails that peer's call, naming it.
  // Here only what the abort gives back is under test.
  std::barrier allDone(3);
  runRanks(RankMode::kThreads, 3, [&allDone](const RankContext& ctx) {
    allReduceOnce(ctx.comm);
    allDone.arrive_and_wait();
    EXPECT_EQ(loomCommAbort(ctx.comm), loomSuccess);
    *ctx.commReleased = true;
  });
}

void destroyAfterAFailedCall() {
  runRanks(RankMode::kThreads, 3, [](const RankContext& ctx) {
    // Rank 0 passes another count: every rank's call fails.
    std::vector<int32_t> in(ctx.rank == 0 ? 5 : 7, 1), out(7);
    EXPECT_NE(loomAllReduce(in.data(), out.data(), in.size(), loomInt32, loomSum, ctx.comm, nullptr, nullptr),
              loomSuccess);
  });
}

void initThatTimesOut() {
  HarnessOptions options;
  options.createComm = false;
  runRanks(
      RankMode::kThreads, 3,
      [](const RankContext& ctx) {
        if (ctx.rank == 2) return;  // never joins
        loomConfig_t config = LOOM_CONFIG_INITIALIZER;
        config.timeoutMs = 300;
        loomComm_t comm = nullptr;
        EXPECT_EQ(loomCommInitRank(&comm, 3, *ctx.id, ctx.rank, &config), loomTimeout);
      },
      options);
}

void splitThenDestroyBoth() {
  runRanks(RankMode::kThreads, 4, [](const RankContext& ctx) {
    loomComm_t half = nullptr;
    ASSERT_EQ(loomCommSplit(ctx.comm, ctx.rank % 2, ctx.rank, &half, nullptr), loomSuccess)
        << loomCommGetLastError(ctx.comm);
    allReduceOnce(half);
    EXPECT_EQ(loomCommDestroy(half), loomSuccess);
  });
}

void requestsLeftUnwaited() {
  runRanks(RankMode::kThreads, 3, [](const RankContext& ctx) {
    int32_t in = 1, out = 0;
    loomRequest_t request = nullptr;
    ASSERT_EQ(loomAllReduce(&in, &out, 1, loomInt32, loomSum, ctx.comm, nullptr, &request), loomSuccess);
    EXPECT_EQ(loomWait(request, -1), loomSuccess);
    EXPECT_EQ(loomRequestFree(request), loomSuccess);
    ASSERT_EQ(loomBarrier(ctx.comm, &request), loomSuccess);
    // Freed without a wait: destroy must still end cleanly.
    EXPECT_EQ(loomRequestFree(request), loomSuccess);
  });
}

void expectEveryEndingGivesBackWhatItTook() {
  // The first communicator initialises what lives as long as the process
  // (OpenSSL, the log's settings): only what comes after must come back.
  destroyAfterWork();
  // Its rendezvous thread ends a moment after the ranks return; then this
  // process runs its main thread alone.
  for (int i = 0; i < 500 && heldNow().threads > 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const Held baseline = heldNow();
  ASSERT_EQ(baseline.threads, 1) << "a thread of the first communicator outlived it";
  const std::vector<std::pair<const char*, Ending>> endings = {
      {"destroy after work", destroyAfterWork},
      {"abort after work", abortAfterWork},
      {"destroy after a failed call", destroyAfterAFailedCall},
      {"init that times out (a rank never joins)", initThatTimesOut},
      {"split, then destroy both", splitThenDestroyBoth},
      {"a request freed unwaited", requestsLeftUnwaited},
  };
  for (int round = 0; round < 3; ++round) {
    for (const auto& [name, ending] : endings) {
      ending();
      const Held after = heldOnceSettled(baseline);
      EXPECT_EQ(after.descriptors, baseline.descriptors) << name << " (round " << round << ")";
      EXPECT_EQ(after.threads, baseline.threads) << name << " (round " << round << ")";
    }
  }
}

TEST(ReleaseTest, EveryEndOfACommunicatorGivesBackDescriptorsAndThreads) {
  expectEveryEndingGivesBackWhatItTook();
}

// Over TCP a communicator also holds a listening socket, two sockets per
// peer and channel, an eventfd and a progress thread.
TEST(ReleaseTest, EveryEndOfATcpCommunicatorGivesBackSocketsAndThreads) {
  ScopedEnv tcp("LOOM_TRANSPORTS", "tcp");
  ScopedEnv sockets("LOOM_SOCKET_NSOCKS", "2");
  expectEveryEndingGivesBackWhatItTook();
}

}  // namespace
}  // namespace loom::test

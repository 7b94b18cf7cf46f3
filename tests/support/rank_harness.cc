#include "support/rank_harness.h"

#include <gtest/gtest.h>
#include <malloc.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace loom::test {
namespace {

// The suites allocate and free test buffers of up to tens of MiB per case.
// glibc maps each one fresh (or trims the heap after it) and the kernel
// zeroes every page again: page faults were a quarter of the collective
// suites' time. Keeping freed memory in the heap (and in thread arenas)
// removes that; Buffer poisons its bytes on every use, so reused memory
// cannot pass for a result. A no-op under the sanitizers' allocators.
const bool kHeapKept = [] {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest allowed value
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  return true;
}();

// LOOM_TEST_HOST_LAYOUT="2,3": ranks 0-1 run on fake host 0, ranks 2-4 on
// fake host 1 (each with its own LOOM_HOST_ID), so shared memory connects
// ranks within a host and TCP the hosts. Process mode only (the variable is
// per process); ranks past the layout's sum share the last host.
void placeOnFakeHost(int rank) {
  const char* layout = std::getenv("LOOM_TEST_HOST_LAYOUT");
  if (layout == nullptr || layout[0] == '\0') return;
  int host = 0, first = 0;
  for (const char* at = layout; *at != '\0';) {
    char* end = nullptr;
    const long size = std::strtol(at, &end, 10);
    if (end == at || size < 1) {
      ADD_FAILURE() << "LOOM_TEST_HOST_LAYOUT='" << layout << "' is not a list of rank counts like 2,3";
      return;
    }
    if (rank < first + size) break;
    first += static_cast<int>(size);
    at = *end == ',' ? end + 1 : end;
    if (*at != '\0') ++host;
  }
  setenv("LOOM_HOST_ID", ("fake-host-" + std::to_string(host)).c_str(), 1);
}

void runOneRank(int rank, int nranks, const loomUniqueId& id, const RankBody& body, const HarnessOptions& options) {
  loomComm_t comm = nullptr;
  if (options.createComm) {
    // A communicator's timeout bounds its setup too, and on a busy machine
    // ranks may reach the rendezvous further apart than a test's short
    // timeout: those ranks meet with the default's, and the body gets a
    // communicator split off with the short one (whose setup the ranks
    // start together, having just met). A timeout of 0 or less (the
    // environment's, or none) is the body's own, from the start.
    const HarnessOptions defaults;
    const bool shortTimeout = options.timeoutMs > 0 && options.timeoutMs < defaults.timeoutMs;
    loomConfig_t config = LOOM_CONFIG_INITIALIZER;
    config.timeoutMs = shortTimeout ? defaults.timeoutMs : options.timeoutMs;
    loomResult_t rc = loomCommInitRank(&comm, nranks, id, rank, &config);
    ASSERT_EQ(rc, loomSuccess) << "rank " << rank << ": " << loomGetLastError();
    if (shortTimeout) {
      loomComm_t full = comm;
      config.timeoutMs = options.timeoutMs;
      rc = loomCommSplit(full, 0, rank, &comm, &config);
      const std::string why = rc == loomSuccess ? "" : loomGetLastError();
      EXPECT_EQ(loomCommDestroy(full), loomSuccess) << "rank " << rank << ": " << loomGetLastError();
      ASSERT_EQ(rc, loomSuccess) << "rank " << rank << ": " << why;
    }
  }
  bool released = false;
  body(RankContext{rank, nranks, comm, &released, &id});
  if (comm != nullptr && !released) EXPECT_EQ(loomCommDestroy(comm), loomSuccess) << "rank " << rank;
}

void runAsThreads(int nranks, const loomUniqueId& id, const RankBody& body, const HarnessOptions& options) {
  std::vector<std::thread> threads;
  for (int r = 0; r < nranks; ++r) threads.emplace_back([&, r] { runOneRank(r, nranks, id, body, options); });
  for (auto& t : threads) t.join();
}

// What the keeper process hands the harness: the id, or why there is none.
struct KeptId {
  bool ok = false;
  loomUniqueId id{};
  char error[512] = {};
};

// The unique id, made by a process of its own that keeps its rendezvous
// thread alive until the harness kills it. The test process itself then
// never runs a Loom thread, so it can fork ranks at any time: a fork while
// another thread holds a lock (OpenSSL's, the allocator's) leaves that lock
// held forever in the child, and a rendezvous thread of an earlier run that
// is still waiting for a killed rank would be such a thread.
pid_t startIdKeeper(KeptId* kept) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::snprintf(kept->error, sizeof(kept->error), "pipe failed");
    return -1;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(99);
    close(fds[0]);
    KeptId mine;
    mine.ok = loomGetUniqueId(&mine.id) == loomSuccess;
    if (!mine.ok) std::snprintf(mine.error, sizeof(mine.error), "%s", loomGetLastError());
    if (write(fds[1], &mine, sizeof(mine)) != static_cast<ssize_t>(sizeof(mine))) _exit(98);
    close(fds[1]);
    for (;;) pause();  // until the harness kills it
  }
  close(fds[1]);
  if (pid < 0) {
    close(fds[0]);
    std::snprintf(kept->error, sizeof(kept->error), "fork failed");
    return -1;
  }
  if (read(fds[0], kept, sizeof(*kept)) != static_cast<ssize_t>(sizeof(*kept))) {
    kept->ok = false;
    std::snprintf(kept->error, sizeof(kept->error), "the id keeper (pid %d) died before sending an id", pid);
  }
  close(fds[0]);
  return pid;
}

void stopIdKeeper(pid_t keeper) {
  if (keeper <= 0) return;
  kill(keeper, SIGKILL);
  waitpid(keeper, nullptr, 0);
}

void runAsProcesses(int nranks, const RankBody& body, const HarnessOptions& options) {
  KeptId kept;
  const pid_t keeper = startIdKeeper(&kept);
  if (!kept.ok) {
    stopIdKeeper(keeper);
    FAIL() << "no unique id for the ranks: " << kept.error;
  }
  std::fflush(nullptr);
  const pid_t parent = getpid();
  std::vector<pid_t> children;
  for (int r = 0; r < nranks; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      ADD_FAILURE() << "fork failed for rank " << r;
      break;
    }
    if (pid == 0) {
      // The child runs the body and exits; it never returns into GoogleTest.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(99);
      placeOnFakeHost(r);
      int status = 0;
      try {
        runOneRank(r, nranks, kept.id, body, options);
        status = ::testing::Test::HasFailure() ? 1 : 0;
      } catch (...) {
        status = 2;
      }
      std::fflush(nullptr);
      _exit(status);
    }
    children.push_back(pid);
  }
  const int started = static_cast<int>(children.size());
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.waitSeconds);
  std::vector<bool> reaped(started, false);
  int remaining = started;
  while (remaining > 0) {
    for (int r = 0; r < started; ++r) {
      if (reaped[r]) continue;
      int status = 0;
      pid_t done = waitpid(children[r], &status, WNOHANG);
      if (done != children[r]) continue;
      reaped[r] = true;
      --remaining;
      if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && r == options.killedRank) continue;
      if (WIFSIGNALED(status))
        ADD_FAILURE() << "rank " << r << " (pid " << children[r] << ") was killed by signal " << WTERMSIG(status);
      else if (WEXITSTATUS(status) != 0)
        ADD_FAILURE() << "rank " << r << " (pid " << children[r] << ") failed with exit status " << WEXITSTATUS(status)
                      << " (its failed expectations are printed above)";
    }
    if (remaining == 0) break;
    if (std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < started; ++r) {
        if (reaped[r]) continue;
        kill(children[r], SIGKILL);
        waitpid(children[r], nullptr, 0);
        ADD_FAILURE() << "rank " << r << " was still running after " << options.waitSeconds << " s and was killed";
      }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stopIdKeeper(keeper);
}

}  // namespace

std::string modeName(RankMode mode) {
  return mode == RankMode::kThreads ? "Threads" : "Processes";
}

void runRanks(RankMode mode, int nranks, const RankBody& body, const HarnessOptions& options) {
  if (mode == RankMode::kProcesses) return runAsProcesses(nranks, body, options);
  loomUniqueId id;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess) << loomGetLastError();
  runAsThreads(nranks, id, body, options);
}

}  // namespace loom::test

#include "support/rank_harness.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace loom::test {
namespace {

void runOneRank(int rank, int nranks, const loomUniqueId& id, const RankBody& body, const HarnessOptions& options) {
  loomComm_t comm = nullptr;
  if (options.createComm) {
    loomConfig_t config = LOOM_CONFIG_INITIALIZER;
    config.timeoutMs = options.timeoutMs;
    loomResult_t rc = loomCommInitRank(&comm, nranks, id, rank, &config);
    ASSERT_EQ(rc, loomSuccess) << "rank " << rank << ": " << loomGetLastError();
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

// Forks every rank before the unique id (and with it the rendezvous thread)
// exists, then hands the id down a pipe: forking while another thread of
// the parent holds a lock (OpenSSL's, a static initialiser's guard) would
// leave that lock held forever in the child.
void runAsProcesses(int nranks, const RankBody& body, const HarnessOptions& options) {
  std::fflush(nullptr);
  const pid_t parent = getpid();
  std::vector<pid_t> children;
  std::vector<int> idPipes;
  for (int r = 0; r < nranks; ++r) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      // The child runs the body and exits; it never returns into GoogleTest.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(99);
      close(fds[1]);
      loomUniqueId id;
      if (read(fds[0], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id))) _exit(98);
      int status = 0;
      try {
        runOneRank(r, nranks, id, body, options);
        status = ::testing::Test::HasFailure() ? 1 : 0;
      } catch (...) {
        status = 2;
      }
      std::fflush(nullptr);
      _exit(status);
    }
    close(fds[0]);
    children.push_back(pid);
    idPipes.push_back(fds[1]);
  }
  loomUniqueId id;
  const bool haveId = loomGetUniqueId(&id) == loomSuccess;
  EXPECT_TRUE(haveId) << loomGetLastError();
  for (int fd : idPipes) {  // without an id the children read EOF and exit 98
    if (haveId) EXPECT_EQ(write(fd, &id, sizeof(id)), static_cast<ssize_t>(sizeof(id)));
    close(fd);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.waitSeconds);
  std::vector<bool> reaped(nranks, false);
  int remaining = nranks;
  while (remaining > 0) {
    for (int r = 0; r < nranks; ++r) {
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
      for (int r = 0; r < nranks; ++r) {
        if (reaped[r]) continue;
        kill(children[r], SIGKILL);
        waitpid(children[r], nullptr, 0);
        ADD_FAILURE() << "rank " << r << " was still running after " << options.waitSeconds << " s and was killed";
      }
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
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

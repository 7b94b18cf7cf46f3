// The job: N ranks started together and supervised as one. When one rank
// fails, the others are stopped, because a collective job with a dead rank
// can only hang. job.cc starts the ranks and watches them; job_stop.cc
// decides when and how the job is stopped (a failed rank, --timeout, a
// signal to loomrun) and escalates from SIGTERM to SIGKILL.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "launch.h"
#include "options.h"
#include "tagged_output.h"

namespace loom::tools::loomrun {

// Between the SIGTERM that asks ranks to stop and the SIGKILL that makes
// them; --help names it.
constexpr int kStopGraceSeconds = 3;

using Clock = std::chrono::steady_clock;

struct Rank {
  int index = 0;  // RANK, job-wide
  pid_t pid = -1;  // also its process group id
  bool running = false;
  TaggedStream out;
  TaggedStream err;
};

class Job {
 public:
  explicit Job(Options options);

  // Starts the ranks, supervises them until all have exited, and returns
  // loomrun's exit status. Throws LaunchError if the job cannot be set up.
  int run();

 private:
  enum class Phase { kRunning, kStopping };

  // job.cc: starting and watching.
  void prepareSignalHandling();
  void startRanks();
  void startRank(Rank& rank, ChildSetup& setup, int local);
  void waitForEvents();
  void handleSignals();
  void reapExitedRanks();
  void onRankExited(Rank& rank, int waitStatus);
  static std::string describeRankExit(const Rank& rank, int waitStatus);

  // job_stop.cc: stopping.
  std::optional<Clock::time_point> nextDeadline() const;
  int millisecondsUntilNextDeadline() const;
  void onStopRequest(int signalNumber);
  void actOnDeadlines();
  void failJob(int exitCode, const std::string& reason, int stopSignal = SIGTERM);
  void killRemainingRanks();
  void signalRunningRanks(int signalNumber);
  std::vector<int> runningRanks() const;

  Options options_;
  std::vector<Rank> ranks_;
  std::unordered_map<pid_t, int> rankByPid_;  // pid -> local rank, the index into ranks_
  int runningCount_ = 0;
  int signalFd_ = -1;
  sigset_t originalSignalMask_{};

  Phase phase_ = Phase::kRunning;
  std::optional<int> exitCode_;  // set by the first failure only
  std::string stopReason_;
  std::vector<int> stoppedRanks_;
  std::optional<Clock::time_point> timeoutDeadline_;
  Clock::time_point stopDeadline_{};
  bool sentSigkill_ = false;
};

}  // namespace loom::tools::loomrun

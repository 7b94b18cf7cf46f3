#include "job.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <utility>

#include "exit_status.h"
#include "messages.h"
#include "rank_environment.h"
#include "signals.h"

namespace loom::tools::loomrun {

Job::Job(Options options) : options_(std::move(options)) {}

int Job::run() {
  prepareSignalHandling();
  startRanks();
  if (options_.timeoutSeconds) {
    timeoutDeadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(*options_.timeoutSeconds));
  }
  while (runningCount_ > 0) {
    waitForEvents();
    actOnDeadlines();
  }
  for (auto& rank : ranks_) {
    finishStream(rank.out);
    finishStream(rank.err);
  }
  if (!stoppedRanks_.empty()) {
    report("stopped ranks " + joinRanks(stoppedRanks_) + " after " + stopReason_);
  }
  return exitCode_.value_or(0);
}

void Job::prepareSignalHandling() {
  signalFd_ = openSignalFd(&originalSignalMask_);
}

void Job::startRanks() {
  const JobEnvironment job = makeJobEnvironment(options_);
  std::vector<char*> argv = asExecArray(options_.command);
  rlimit fileLimit{};
  ::getrlimit(RLIMIT_NOFILE, &fileLimit);
  if (options_.tagOutput) {
    raiseFileLimitFor(2 * static_cast<std::size_t>(options_.ranks) + 64, fileLimit);
  }

  // ranks_ is indexed by local rank; messages and output prefixes name the
  // job-wide RANK, as Loom's own error sentences do.
  ranks_.resize(options_.ranks);
  for (int local = 0; local < options_.ranks; ++local) {
    Rank& rank = ranks_[local];
    rank.index = globalRank(job, local);
    std::vector<std::string> environment = rankEnvironment(job, local);
    std::vector<char*> envp = asExecArray(environment);
    ChildSetup setup{.argv = argv.data(),
                     .envp = envp.data(),
                     .commandName = options_.command[0].c_str(),
                     .rank = rank.index,
                     .supervisor = ::getpid(),
                     .stdoutFd = -1,
                     .stderrFd = -1,
                     .signalMask = originalSignalMask_,
                     .fileLimit = fileLimit,
                     .bindCpu = cpuForRank(options_.bindToCore, local)};
    try {
      startRank(rank, setup, local);
    } catch (const LaunchError& error) {
      // Ranks already started would wait forever for the missing one.
      report("cannot start rank " + std::to_string(rank.index) + ": " + error.what());
      failJob(kExitLaunchError, "rank " + std::to_string(rank.index) + " could not be started");
      return;
    }
  }
}

void Job::startRank(Rank& rank, ChildSetup& setup, int local) {
  LaunchedRank launched = launchRank(setup, options_.tagOutput);
  rank.pid = launched.pid;
  rank.running = true;
  ++runningCount_;
  rankByPid_[launched.pid] = local;
  rank.out = std::move(launched.out);
  rank.err = std::move(launched.err);
}

// Sleeps in poll() until a signal, rank output or the next deadline.
void Job::waitForEvents() {
  std::vector<pollfd> watched{{signalFd_, POLLIN, 0}};
  std::vector<TaggedStream*> streams;
  for (auto& rank : ranks_) {
    for (TaggedStream* stream : {&rank.out, &rank.err}) {
      if (stream->readFd < 0) continue;
      watched.push_back({stream->readFd, POLLIN, 0});
      streams.push_back(stream);
    }
  }

  const int ready = ::poll(watched.data(), watched.size(), millisecondsUntilNextDeadline());
  if (ready <= 0) return;  // deadline reached, or EINTR from SIGSTOP/SIGCONT
  if (watched[0].revents != 0) handleSignals();
  for (std::size_t i = 0; i < streams.size(); ++i) {
    // handleSignals() may have finished this stream already.
    if (watched[i + 1].revents == 0 || streams[i]->readFd < 0) continue;
    if (!readAvailable(*streams[i])) finishStream(*streams[i]);
  }
}

void Job::handleSignals() {
  while (const int signalNumber = readPendingSignal(signalFd_)) {
    if (signalNumber == SIGCHLD) {
      // SIGCHLDs coalesce: reap everything that has exited.
      reapExitedRanks();
    } else {
      onStopRequest(signalNumber);
    }
  }
}

void Job::reapExitedRanks() {
  int waitStatus = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &waitStatus, WNOHANG)) > 0) {
    const auto found = rankByPid_.find(pid);
    if (found != rankByPid_.end()) onRankExited(ranks_[found->second], waitStatus);
  }
}

void Job::onRankExited(Rank& rank, int waitStatus) {
  rank.running = false;
  --runningCount_;
  finishStream(rank.out);
  finishStream(rank.err);
  // Once we are stopping the job, ranks dying is what we asked for.
  if (phase_ != Phase::kRunning || exitedCleanly(waitStatus)) return;

  report(describeRankExit(rank, waitStatus));
  failJob(shellStatus(waitStatus), "rank " + std::to_string(rank.index) + " failed");
}

std::string Job::describeRankExit(const Rank& rank, int waitStatus) {
  std::string text = "rank " + std::to_string(rank.index) + " (pid " + std::to_string(rank.pid) + ")";
  if (WIFSIGNALED(waitStatus)) {
    text += " was killed by signal " + describeSignal(WTERMSIG(waitStatus));
    if (WCOREDUMP(waitStatus)) text += ", core dumped";
  } else {
    text += " exited with status " + std::to_string(shellStatus(waitStatus));
  }
  return text;
}

}  // namespace loom::tools::loomrun

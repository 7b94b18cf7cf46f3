// Stopping the job. The first cause (a failed rank, --timeout, a signal to
// loomrun) decides the exit status and sends the ranks SIGTERM (or the
// signal loomrun received) so they can clean up; ranks still running
// kStopGraceSeconds later, or when a second signal shows the user is not
// willing to wait, get SIGKILL.
#include <signal.h>

#include <algorithm>

#include "exit_status.h"
#include "job.h"
#include "messages.h"

namespace loom::tools::loomrun {

std::optional<Clock::time_point> Job::nextDeadline() const {
  if (phase_ == Phase::kRunning) return timeoutDeadline_;
  if (!sentSigkill_) return stopDeadline_;
  return std::nullopt;
}

int Job::millisecondsUntilNextDeadline() const {
  const auto deadline = nextDeadline();
  if (!deadline) return -1;
  const auto remaining = *deadline - Clock::now();
  if (remaining <= Clock::duration::zero()) return 0;
  // Round up so we never wake just before the deadline and spin.
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(remaining).count();
  return static_cast<int>(std::min<long long>(ms, 24LL * 3600 * 1000));
}

// SIGINT/SIGTERM/SIGHUP to loomrun: pass it on so the ranks can clean up.
// A second one means the user is not willing to wait.
void Job::onStopRequest(int signalNumber) {
  const std::string name = describeSignal(signalNumber);
  if (phase_ == Phase::kRunning) {
    report("received " + name + "; forwarding it to ranks " + joinRanks(runningRanks()));
    failJob(128 + signalNumber, "receiving " + name, signalNumber);
  } else if (runningCount_ > 0) {
    report("received " + name + " again; killing ranks " + joinRanks(runningRanks()));
    killRemainingRanks();
  }
}

void Job::actOnDeadlines() {
  const auto now = Clock::now();
  if (phase_ == Phase::kRunning && timeoutDeadline_ && now >= *timeoutDeadline_) {
    report("timed out after " + options_.timeoutText + " s with ranks " + joinRanks(runningRanks()) + " still running");
    failJob(kExitTimeout, "the " + options_.timeoutText + " s timeout");
  } else if (phase_ == Phase::kStopping && !sentSigkill_ && now >= stopDeadline_ && runningCount_ > 0) {
    report("ranks " + joinRanks(runningRanks()) + " did not stop within " + std::to_string(kStopGraceSeconds) +
           " s; sending SIGKILL");
    killRemainingRanks();
  }
}

// Records the first cause of failure (it decides the exit status) and
// asks the ranks still running to stop.
void Job::failJob(int exitCode, const std::string& reason, int stopSignal) {
  exitCode_ = exitCode;
  stopReason_ = reason;
  phase_ = Phase::kStopping;
  stoppedRanks_ = runningRanks();
  signalRunningRanks(stopSignal);
  stopDeadline_ = Clock::now() + std::chrono::seconds(kStopGraceSeconds);
}

void Job::killRemainingRanks() {
  signalRunningRanks(SIGKILL);
  sentSigkill_ = true;
}

// Only ranks not yet reaped: their pid, and so their group id, cannot have
// been reused by an unrelated process.
void Job::signalRunningRanks(int signalNumber) {
  for (const auto& rank : ranks_) {
    if (rank.running) ::kill(-rank.pid, signalNumber);
  }
}

std::vector<int> Job::runningRanks() const {
  std::vector<int> indices;
  for (const auto& rank : ranks_) {
    if (rank.running) indices.push_back(rank.index);
  }
  return indices;
}

}  // namespace loom::tools::loomrun

// Runs one test body on N ranks, as threads of this process or as forked
// processes, each with its own communicator built from one unique id.
#pragma once

#include <loom/loom.h>

#include <functional>
#include <string>

namespace loom::test {

enum class RankMode { kThreads, kProcesses };

std::string modeName(RankMode mode);

// What a rank's body receives.
struct RankContext {
  int rank;
  int nranks;
  loomComm_t comm;
  // A body that destroys or aborts comm itself sets this, so the harness
  // does not destroy it again.
  bool* commReleased;
  // The job's unique id, for bodies that create communicators themselves.
  const loomUniqueId* id;
};

struct HarnessOptions {
  // The communicators' timeout: a broken test fails in a minute. A shorter
  // positive one is the body's communicator's, split off one the ranks met
  // in with this default (a timeout bounds a communicator's setup too).
  int64_t timeoutMs = 60000;
  int waitSeconds = 240;   // processes still running after this are killed and the test fails
  bool createComm = true;  // false: the body gets comm == nullptr and makes its own
  int killedRank = -1;     // processes: this rank is meant to die by SIGKILL (a fault test)
};

using RankBody = std::function<void(const RankContext&)>;

// Runs body on every rank and reports failures through GoogleTest: in
// process mode a child with a failed expectation exits non-zero and the
// parent fails the test naming that rank. Children never run anything but
// `body` (no re-execution of the test binary), so a broken test cannot
// multiply processes. In process mode the unique id, and with it the
// rendezvous thread, lives in one more child that the harness kills at the
// end, so the test process never runs a Loom thread of its own.
void runRanks(RankMode mode, int nranks, const RankBody& body, const HarnessOptions& options = {});

}  // namespace loom::test

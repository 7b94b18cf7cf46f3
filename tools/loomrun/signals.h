// How signals reach loomrun: not through handlers but through a signalfd.
// SIGCHLD (a rank exited) and SIGINT/SIGTERM/SIGHUP (stop the job) are
// blocked and read in the same poll() as the ranks' output, so child exits,
// forwarded signals and rank output all arrive in one place and no handler
// runs in the middle of bookkeeping.
#pragma once

#include <signal.h>

namespace loom::tools::loomrun {

// Blocks the signals above and returns a non-blocking signalfd for them;
// *originalMask receives the mask from before, for the ranks to start with.
// Also ignores SIGPIPE: a closed stdout (loomrun ... | head) must not kill
// the supervisor before it has stopped the ranks; such output is dropped
// instead. Throws LaunchError.
int openSignalFd(sigset_t* originalMask);

// The number of the next signal waiting on the signalfd, or 0 if none is.
int readPendingSignal(int signalFd);

}  // namespace loom::tools::loomrun

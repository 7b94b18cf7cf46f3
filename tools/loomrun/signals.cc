#include "signals.h"

#include <sys/signalfd.h>
#include <unistd.h>

#include "messages.h"

namespace loom::tools::loomrun {

int openSignalFd(sigset_t* originalMask) {
  sigset_t handled;
  sigemptyset(&handled);
  for (const int signalNumber : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) {
    sigaddset(&handled, signalNumber);
  }
  if (::sigprocmask(SIG_BLOCK, &handled, originalMask) != 0) {
    throwErrno("cannot block signals");
  }
  const int signalFd = ::signalfd(-1, &handled, SFD_NONBLOCK | SFD_CLOEXEC);
  if (signalFd < 0) throwErrno("cannot create a signalfd");
  ::signal(SIGPIPE, SIG_IGN);
  return signalFd;
}

int readPendingSignal(int signalFd) {
  signalfd_siginfo info;
  if (::read(signalFd, &info, sizeof(info)) != static_cast<ssize_t>(sizeof(info))) return 0;
  return static_cast<int>(info.ssi_signo);
}

}  // namespace loom::tools::loomrun

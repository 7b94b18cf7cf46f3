#include "launch.h"

#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string_view>

#include "exit_status.h"
#include "messages.h"

extern char** environ;

namespace loom::tools::loomrun {
namespace {

[[noreturn]] void becomeRank(const ChildSetup& setup) {
  // Its own process group lets loomrun stop the rank together with anything
  // it started (sh -c 'prog', mpi-style wrappers) with one kill().
  ::setpgid(0, 0);
  // Die with loomrun even if it is SIGKILLed; the getppid() check closes the
  // window in which loomrun died before the prctl took effect.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != setup.supervisor) ::_exit(kExitLaunchError);

  if (setup.stdoutFd >= 0) ::dup2(setup.stdoutFd, STDOUT_FILENO);
  if (setup.stderrFd >= 0) ::dup2(setup.stderrFd, STDERR_FILENO);
  // Undo what loomrun changed for itself; ignored signals and limits survive
  // exec and the program should start as if run from the shell.
  ::signal(SIGPIPE, SIG_DFL);
  ::setrlimit(RLIMIT_NOFILE, &setup.fileLimit);
  ::sigprocmask(SIG_SETMASK, &setup.signalMask, nullptr);
  if (setup.bindCpu >= 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(setup.bindCpu, &one);
    ::sched_setaffinity(0, sizeof(one), &one);
  }

  environ = const_cast<char**>(setup.envp);
  ::execvp(setup.argv[0], setup.argv);

  char message[512];
  const int length = std::snprintf(message, sizeof(message), "loomrun: rank %d: cannot run '%s': %s\n", setup.rank,
                                   setup.commandName, std::strerror(errno));
  if (length > 0) {
    writeAll(STDERR_FILENO, std::string_view(message, std::min<std::size_t>(length, sizeof(message) - 1)));
  }
  ::_exit(kExitCannotRun);
}

}  // namespace

std::vector<char*> asExecArray(std::vector<std::string>& words) {
  std::vector<char*> array;
  for (auto& word : words) array.push_back(word.data());
  array.push_back(nullptr);
  return array;
}

// Unbound ranks all start on loomrun's CPU and share it until the load
// balancer spreads them, tens of milliseconds later; and when ranks
// outnumber CPUs, pinning them evenly beats the scheduler's shuffling
// (8 B AllReduce, 4 ranks on 2 CPUs: 13 us pinned, 25-30 us unbound).
int cpuForRank(bool bindToCore, int rank) {
  if (!bindToCore) return -1;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return -1;
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  if (cpus.empty()) return -1;
  return cpus[rank % cpus.size()];
}

LaunchedRank launchRank(ChildSetup& setup, bool tagOutput) {
  std::optional<Pipe> outPipe;
  std::optional<Pipe> errPipe;
  if (tagOutput) {
    outPipe = makeOutputPipe();
    try {
      errPipe = makeOutputPipe();
    } catch (...) {
      ::close(outPipe->readFd);
      ::close(outPipe->writeFd);
      throw;
    }
    setup.stdoutFd = outPipe->writeFd;
    setup.stderrFd = errPipe->writeFd;
  }

  const pid_t pid = ::fork();
  if (pid == 0) becomeRank(setup);
  const int forkErrno = errno;
  for (const auto& pipe : {outPipe, errPipe}) {
    if (pipe) ::close(pipe->writeFd);  // the rank holds the write ends now
  }
  if (pid < 0) {
    for (const auto& pipe : {outPipe, errPipe}) {
      if (pipe) ::close(pipe->readFd);
    }
    errno = forkErrno;
    throwErrno("fork");
  }

  // Also set the group here: the child may not have run yet when we first
  // need to signal it. EACCES after its exec is harmless; it did it itself.
  ::setpgid(pid, pid);
  LaunchedRank launched;
  launched.pid = pid;
  if (tagOutput) {
    // Appended piecewise: `"[" + std::string` trips GCC 12's false -Wrestrict (PR 105329).
    std::string prefix = "[";
    prefix += std::to_string(setup.rank);
    prefix += "] ";
    launched.out = TaggedStream{outPipe->readFd, STDOUT_FILENO, prefix, {}};
    launched.err = TaggedStream{errPipe->readFd, STDERR_FILENO, prefix, {}};
  }
  return launched;
}

}  // namespace loom::tools::loomrun

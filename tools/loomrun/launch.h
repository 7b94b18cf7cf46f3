// Starting one rank: its pipes (with --tag-output), the fork, and what the
// child does before exec: its own process group, death with loomrun, the
// signal mask, limits and CPU binding of a program started from the shell.
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "tagged_output.h"

namespace loom::tools::loomrun {

// Everything a child needs after fork, prepared beforehand so that the child
// only makes system calls between fork and exec.
struct ChildSetup {
  char* const* argv;
  char* const* envp;
  const char* commandName;
  int rank;  // RANK, job-wide: for messages and the --tag-output prefix
  pid_t supervisor;
  int stdoutFd;  // -1: keep loomrun's
  int stderrFd;
  sigset_t signalMask;
  rlimit fileLimit;
  int bindCpu;  // -1: leave the CPU binding alone
};

// execvp wants NULL-terminated arrays of char*; the strings must outlive it.
std::vector<char*> asExecArray(std::vector<std::string>& words);

// --bind-to core: the rank-th CPU of those loomrun may use, round robin;
// -1 (leave the binding alone) without bindToCore or when none is known.
int cpuForRank(bool bindToCore, int rank);

struct LaunchedRank {
  pid_t pid = -1;    // also its process group id
  TaggedStream out;  // closed (readFd -1) without --tag-output
  TaggedStream err;
};

// Forks the rank (in its own process group) with its output through pipes
// when tagOutput. Throws LaunchError, having closed what it opened.
LaunchedRank launchRank(ChildSetup& setup, bool tagOutput);

}  // namespace loom::tools::loomrun

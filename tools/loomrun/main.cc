// loomrun: the local launcher for Loom programs.
//
//   loomrun -n N [--tag-output] [--timeout SECONDS] [--bind-to core|none]
//           [--nnodes K --node-rank R --master-addr A --master-port P] [--] CMD ARGS...
//
// Starts N ranks of CMD on this machine with the environment variables that
// torchrun sets (so the same program runs under either launcher) plus a
// LOOM_SECRET that the bootstrap uses to authenticate its peers (fresh for a
// job of one node; a job of several runs one loomrun per node, as torchrun's
// static rendezvous, and passes on the secret they share), and then
// supervises them as one job: when one rank fails, the others are stopped,
// because a collective job with a dead rank can only hang.
//
// Only libc and the standard library are used, so the tool builds anywhere
// the library does. The parts, one concern each:
//   options.cc           the command line and --help
//   rank_environment.cc  torchrun's variables, MASTER_ADDR/PORT and LOOM_SECRET
//   launch.cc            forking a rank and preparing it for exec
//   tagged_output.cc     --tag-output's pipes and "[RANK] " line forwarding
//   signals.cc           signals read through a signalfd
//   job.cc               starting the ranks and watching them
//   job_stop.cc          stopping the job: failures, --timeout, SIGTERM then SIGKILL
//   exit_status.cc       exit codes, wait statuses and signal names
//   messages.cc          loomrun's own "loomrun: ..." lines
// This file turns the command line into a job and the job into an exit status.

#include <loom/version.h>
#include <unistd.h>

#include <utility>

#include "exit_status.h"
#include "job.h"
#include "messages.h"
#include "options.h"

namespace loom::tools::loomrun {
namespace {

int runLauncher(int argc, char** argv) {
  Options options;
  try {
    options = parseCommandLine(argc, argv);
  } catch (const UsageError& error) {
    report(error.sentence + ".");
    return kExitUsage;
  }
  if (options.showHelp) {
    writeAll(STDOUT_FILENO, kUsage);
    return 0;
  }
  if (options.showVersion) {
    writeAll(STDOUT_FILENO, "loomrun (Loom) " LOOM_VERSION_STRING "\n");
    return 0;
  }
  try {
    return Job(std::move(options)).run();
  } catch (const LaunchError& error) {
    report(error.what());
    return kExitLaunchError;
  }
}

}  // namespace
}  // namespace loom::tools::loomrun

int main(int argc, char** argv) {
  return loom::tools::loomrun::runLauncher(argc, argv);
}

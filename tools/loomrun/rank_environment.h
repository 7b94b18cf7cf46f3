// What every rank of the job is told through its environment: torchrun's
// variables (so the same program runs under either launcher), a free
// MASTER_PORT, and a LOOM_SECRET fresh for this job, with which the
// bootstrap admits only this job's ranks.
#pragma once

#include <string>
#include <vector>

namespace loom::tools::loomrun {

struct JobEnvironment {
  int worldSize;
  std::string masterPort;
  std::string secret;
};

// The port is free when we look, and the ranks bind it moments later; the
// kernel does not hand out a port it just gave us again soon, which is the
// same bet torchrun makes. Throws LaunchError.
std::string pickFreePort();

// 128 bits from the kernel's CSPRNG, as hex so it travels in the
// environment. Throws LaunchError.
std::string makeSecret();

// loomrun's own environment with the job's variables for `rank` set over
// it, as "NAME=value" entries.
std::vector<std::string> rankEnvironment(const JobEnvironment& job, int rank);

}  // namespace loom::tools::loomrun

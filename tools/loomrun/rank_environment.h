// What every rank of the job is told through its environment: torchrun's
// variables (so the same program runs under either launcher), the master's
// address and port, and the LOOM_SECRET with which the bootstrap admits only
// this job's ranks: fresh for a job of one node, the one all nodes were
// given for a job of several.
#pragma once

#include <string>
#include <vector>

#include "options.h"

namespace loom::tools::loomrun {

struct JobEnvironment {
  int localWorldSize;
  int firstRank;  // RANK of local rank 0
  int worldSize;
  int nnodes;
  int nodeRank;
  std::string masterAddr;
  std::string masterPort;
  std::string secret;  // empty: LOOM_SECRET is not set (Loom derives one)
};

// The job's environment from the command line: picks the port and makes
// the secret where the options leave them to loomrun. Throws LaunchError.
JobEnvironment makeJobEnvironment(const Options& options);

// A port free where rank 0 will listen: on masterAddr (an IPv4 or IPv6
// address or a host name, resolved as Loom resolves MASTER_ADDR), or, when
// that is not this host's, on every address of its family. The port is
// free when we look, and the ranks bind it moments later; the kernel does
// not hand out a port it just gave us again soon, which is the same bet
// torchrun makes. Throws LaunchError.
std::string pickFreePort(const std::string& masterAddr);

// 128 bits from the kernel's CSPRNG, as hex so it travels in the
// environment. Throws LaunchError.
std::string makeSecret();

// loomrun's own environment with the job's variables for the rank with
// this LOCAL_RANK set over it, as "NAME=value" entries.
std::vector<std::string> rankEnvironment(const JobEnvironment& job, int localRank);

// RANK of the rank with this LOCAL_RANK: each node holds one block of
// consecutive ranks, in node order.
int globalRank(const JobEnvironment& job, int localRank);

}  // namespace loom::tools::loomrun

// How a perf binary finds its peers, in the three ways users launch it:
// mpirun (the unique id travels by MPI_Bcast when built with MPI), loomrun or
// torchrun-style variables, or alone as a single rank.
#pragma once

#include <loom/loom.h>

#include <string>

namespace loom::perf {

struct Launch {
  loomComm_t comm = nullptr;
  std::string how;  // "mpirun", "environment (torchrun)", "single process"
};

// Exits with a sentence on failure.
Launch launchCommunicator(const loomConfig_t* config);
void finishLaunch(const Launch& launch);

}  // namespace loom::perf

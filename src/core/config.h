// Every environment variable Loom reads is read here, so the list in
// README.md can be checked against few files: the logger's own
// (LOOM_DEBUG*) are read under it, in base/log_settings.cc, and each
// transport kind's own (LOOM_SHM_*, LOOM_CMA, LOOM_SOCKET_* but the
// interface) in its folder's *_settings.cc, through readKindSettings.
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/log_settings.h"
#include "bootstrap/interface_choice.h"
#include "collectives/team.h"
#include "transport/registry.h"

namespace loom {

// Every LOOM_* variable that is set, as NAME=VALUE, for the INFO echo.
// LOOM_SECRET's value is replaced: logs get shared, secrets must not be.
std::vector<std::string> loomVariablesForLog();

constexpr int64_t kDefaultTimeoutMs = 10 * 60 * 1000;

// Settings of one communicator, fixed at init.
struct CommConfig {
  int64_t timeoutMs = kDefaultTimeoutMs;  // config->timeoutMs, else LOOM_TIMEOUT_MS
  std::string name;                       // config->name, for messages
  int spinIterations = -1;                // LOOM_SPIN; -1: chosen from cores vs ranks
  int64_t yieldMicros = -1;               // LOOM_YIELD_US: time spent yielding before a futex sleep; -1: chosen
  std::string algorithm;                  // LOOM_ALGO as set, for messages (parsed: tuning.allowed)
  std::string topoFile;                   // LOOM_TOPO_FILE: NCCL or hwloc XML instead of detection
  std::string topoDumpFile;               // LOOM_TOPO_DUMP_FILE: write what was detected (NCCL XML)
  // LOOM_ALGO parsed, LOOM_ALLPAIRS_MAX_BYTES, LOOM_DIRECT_MIN_BYTES,
  // LOOM_TREE_MAX_BYTES, and the cost constants of LOOM_TUNING_FILE (or
  // built in): what the algorithm choice reads (collectives/plan.h).
  Tuning tuning;
  std::string tuningFile;               // LOOM_TUNING_FILE, for messages
  std::string transports;               // LOOM_TRANSPORTS: "" (all), "shm", "^shm", ...
  bootstrap::InterfaceRequest sockets;  // LOOM_SOCKET_IFNAME, LOOM_SOCKET_FAMILY: the interface to offer
  KindSettingsList kinds;               // every transport kind's own settings (registry.h)
  size_t flightRecorderEntries = 32;    // LOOM_FLIGHT_RECORDER_ENTRIES: operations kept per communicator
  int dumpSignal = 0;                   // LOOM_DUMP_ON_SIGNAL: USR1 or USR2 dumps the flight recorders
};

// Throws loom::Error(loomInvalidArgument) naming the variable or field that
// is malformed.
CommConfig readCommConfig(const loomConfig_t* user);

// LOOM_TOPO_FILE, for tools that show what a communicator would load.
std::string topologyFileFromEnvironment();

// LOOM_SOCKET_IFNAME and LOOM_SOCKET_FAMILY: which interface's address goes
// into unique ids and where TCP listens (interface_choice.h has the rules).
// Throws loomInvalidArgument naming a malformed variable and its value.
bootstrap::InterfaceRequest socketRequest();

// Where a rank learns its place when started by a launcher.
struct LaunchEnvironment {
  int rank = -1;
  int nranks = -1;
  int localRank = -1;
  std::string masterAddr;
  int masterPort = -1;
  std::string secret;    // LOOM_SECRET; empty if unset
  std::string launcher;  // "torchrun", "Open MPI", "Slurm" or "PMI"
};

// torchrun (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), Open MPI
// (OMPI_COMM_WORLD_*), Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID) and
// PMI (PMI_RANK, PMI_SIZE). The rendezvous address always comes from
// MASTER_ADDR and MASTER_PORT. Throws loomInvalidUsage naming what is missing.
LaunchEnvironment readLaunchEnvironment();

}  // namespace loom

#include "core/config.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "base/deadline.h"
#include "base/env_value.h"
#include "base/error.h"
#include "collectives/algorithm_table.h"
#include "collectives/tuning_file.h"
#include "transport/registry.h"

namespace loom {
namespace {

// USR1 or USR2, with or without SIG, any case: the signals a process can
// spare for "print what you are doing".
int parseDumpSignal(const std::string& text) {
  std::string name;
  for (char c : text) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.rfind("SIG", 0) == 0) name = name.substr(3);
  if (name == "USR1") return SIGUSR1;
  if (name == "USR2") return SIGUSR2;
  fail(loomInvalidArgument,
       "LOOM_DUMP_ON_SIGNAL='" + text + "' is not a signal Loom can take for dumps: use USR1 or USR2");
}

}  // namespace

namespace {

struct RankVariables {
  const char* launcher;
  const char* rank;
  const char* size;
  const char* localRank;
};

// Checked in this order: the first launcher whose rank variable is set wins.
constexpr RankVariables kLaunchers[] = {
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"PMI", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
};

std::string required(const char* name, const std::string& why) {
  auto value = envValue(name);
  if (!value) fail(loomInvalidUsage, std::string(name) + " is not set; " + why);
  return *value;
}

}  // namespace

std::vector<std::string> loomVariablesForLog() {
  std::vector<std::string> found;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string text = *entry;
    if (text.rfind("LOOM_", 0) != 0) continue;
    if (text.rfind("LOOM_SECRET=", 0) == 0) text = "LOOM_SECRET=(set, value not shown)";
    found.push_back(text);
  }
  return found;
}

CommConfig readCommConfig(const loomConfig_t* user) {
  CommConfig config;
  if (auto timeout = envValue("LOOM_TIMEOUT_MS"))
    config.timeoutMs = std::min(parseEnvInteger(*timeout, "LOOM_TIMEOUT_MS", 1, INT64_MAX), Deadline::kForeverMs);
  config.kinds = readKindSettings();  // each transport kind's own variables, refused here if malformed
  config.sockets = socketRequest();   // refuses a malformed list here, before any rank waits
  if (auto transports = envValue("LOOM_TRANSPORTS")) {
    parseTransportFilter(*transports, "LOOM_TRANSPORTS");  // refuses unknown names here, before any rank waits
    config.transports = *transports;
  }
  if (auto algorithm = envValue("LOOM_ALGO")) {
    config.tuning.allowed =
        AlgorithmFilter::parse(*algorithm);  // refuses a malformed setting here, before any rank waits
    config.algorithm = *algorithm;
  }
  config.topoFile = topologyFileFromEnvironment();
  config.topoDumpFile = envValue("LOOM_TOPO_DUMP_FILE").value_or("");
  if (auto limit = envValue("LOOM_ALLPAIRS_MAX_BYTES"))
    config.tuning.allPairsMaxBytes = parseEnvInteger(*limit, "LOOM_ALLPAIRS_MAX_BYTES", 0, 64 << 20);
  if (auto limit = envValue("LOOM_TREE_MAX_BYTES"))
    config.tuning.treeMaxBytes = parseEnvInteger(*limit, "LOOM_TREE_MAX_BYTES", 0, INT64_MAX / 2);
  if (auto limit = envValue("LOOM_DIRECT_MIN_BYTES"))
    config.tuning.directMinBytes = parseEnvInteger(*limit, "LOOM_DIRECT_MIN_BYTES", 0, INT64_MAX / 2);
  if (auto tuning = envValue("LOOM_TUNING_FILE")) {
    config.tuningFile = *tuning;
    config.tuning.costs = readTuningFile(*tuning);  // refuses a malformed file here, before any rank waits
  }
  if (auto yields = envValue("LOOM_YIELD_US"))
    config.yieldMicros = parseEnvInteger(*yields, "LOOM_YIELD_US", 0, 10000000);
  if (auto entries = envValue("LOOM_FLIGHT_RECORDER_ENTRIES"))
    config.flightRecorderEntries = parseEnvInteger(*entries, "LOOM_FLIGHT_RECORDER_ENTRIES", 0, 1 << 20);
  if (auto signal = envValue("LOOM_DUMP_ON_SIGNAL")) config.dumpSignal = parseDumpSignal(*signal);
  if (auto spin = envValue("LOOM_SPIN")) config.spinIterations = parseEnvInteger(*spin, "LOOM_SPIN", 0, 1 << 30);

  if (user != nullptr) {
    if (user->size < sizeof(size_t) + sizeof(int64_t))
      fail(loomInvalidArgument, "loomConfig_t.size is " + std::to_string(user->size) +
                                    "; initialise the config with LOOM_CONFIG_INITIALIZER");
    if (user->timeoutMs == 0 || user->timeoutMs < -1)
      fail(loomInvalidArgument, "loomConfig_t.timeoutMs is " + std::to_string(user->timeoutMs) +
                                    "; use -1 for the default or a positive number of milliseconds");
    if (user->timeoutMs > 0) config.timeoutMs = std::min(user->timeoutMs, Deadline::kForeverMs);  // saturates
    if (user->size >= sizeof(loomConfig_t) && user->name != nullptr) config.name = user->name;
  }
  return config;
}

std::string topologyFileFromEnvironment() {
  return envValue("LOOM_TOPO_FILE").value_or("");
}

bootstrap::InterfaceRequest socketRequest() {
  bootstrap::InterfaceRequest request;
  if (auto list = envValue("LOOM_SOCKET_IFNAME"))
    request.list = bootstrap::parseInterfaceList(*list, "LOOM_SOCKET_IFNAME");
  if (auto family = envValue("LOOM_SOCKET_FAMILY"))
    request.family = bootstrap::parseAddressFamily(*family, "LOOM_SOCKET_FAMILY");
  return request;
}

LaunchEnvironment readLaunchEnvironment() {
  LaunchEnvironment launch;
  const RankVariables* found = nullptr;
  for (const RankVariables& candidate : kLaunchers) {
    if (envValue(candidate.rank)) {
      found = &candidate;
      break;
    }
  }
  if (found == nullptr)
    fail(loomInvalidUsage,
         "cannot tell this process's rank: none of RANK (torchrun, loomrun), "
         "OMPI_COMM_WORLD_RANK (Open MPI), SLURM_PROCID (Slurm) or PMI_RANK (PMI) is set");
  launch.launcher = found->launcher;
  const std::string because =
      std::string("the ") + found->launcher + " launch sets " + found->rank + " and needs it too";
  launch.rank = parseEnvInteger(*envValue(found->rank), found->rank, 0, 1 << 24);
  launch.nranks = parseEnvInteger(required(found->size, because), found->size, 1, 1 << 24);
  if (launch.rank >= launch.nranks)
    fail(loomInvalidUsage, std::string(found->rank) + "=" + std::to_string(launch.rank) + " is not below " +
                               found->size + "=" + std::to_string(launch.nranks));
  if (auto local = envValue(found->localRank)) launch.localRank = parseEnvInteger(*local, found->localRank, 0, 1 << 24);
  const std::string rendezvous = "Loom meets its peers at MASTER_ADDR:MASTER_PORT (set both, as torchrun does)";
  launch.masterAddr = required("MASTER_ADDR", rendezvous);
  launch.masterPort = parseEnvInteger(required("MASTER_PORT", rendezvous), "MASTER_PORT", 1, 65535);
  if (auto secret = envValue("LOOM_SECRET")) launch.secret = *secret;
  return launch;
}

}  // namespace loom

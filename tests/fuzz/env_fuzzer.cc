// The environment parsers (src/core/config.cc, and src/base/log_settings.cc
// for the logging variables): every LOOM_* setting a
// communicator reads, and the launchers' rank variables. Any values either
// parse within their documented ranges or fail with loom::Error naming the
// variable; never a crash or UB.
//
// Input: lines "NAME=VALUE"; NAME must be one of kVariables (others are
// ignored), so the corpus reads like a shell environment. Three pseudo
// variables fill a loomConfig_t: config.size, config.timeoutMs, config.name.
// The logging variables (LOOM_DEBUG, LOOM_DEBUG_SUBSYS, LOOM_DEBUG_FILE,
// LOOM_DEBUG_TIMESTAMP_FORMAT) go to parseLogSettings, which the process-wide
// logSettings() reads once and so cannot be fed per input.
#include <loom/loom.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "base/error.h"
#include "bootstrap/unique_id.h"
#include "core/config.h"
#include "fuzz_support.h"

namespace {

constexpr const char* kVariables[] = {
    "LOOM_TIMEOUT_MS",
    "LOOM_SHM_SLOT_BYTES",
    "LOOM_SHM_SLOTS",
    "LOOM_SPIN",
    "LOOM_YIELD_US",
    "LOOM_ALGO",
    "LOOM_TREE_MAX_BYTES",
    "LOOM_ALLPAIRS_MAX_BYTES",
    "LOOM_CMA",
    "LOOM_DIRECT_MIN_BYTES",
    "LOOM_TOPO_FILE",
    "LOOM_TOPO_DUMP_FILE",
    "LOOM_SOCKET_SLOT_BYTES",
    "LOOM_SOCKET_SLOTS",
    "LOOM_SOCKET_BUFFER_BYTES",
    "LOOM_SOCKET_NSOCKS",
    "LOOM_MEM_SLOT_BYTES",
    "LOOM_MEM_SLOTS",
    "LOOM_MEM_DELAY_US",
    "LOOM_MEM_REGIONS",
    "LOOM_TRANSPORTS",
    "LOOM_SOCKET_IFNAME",
    "LOOM_SOCKET_FAMILY",
    "LOOM_SECRET",
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_RANK",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "SLURM_LOCALID",
    "PMI_RANK",
    "PMI_SIZE",
    "MPI_LOCALRANKID",
};

bool known(const std::string& name) {
  for (const char* v : kVariables)
    if (name == v) return true;
  return false;
}

int64_t number(const std::string& text) {
  return std::strtoll(text.c_str(), nullptr, 0);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  loom::fuzz::quietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (const char* v : kVariables) unsetenv(v);
  loomConfig_t config = LOOM_CONFIG_INITIALIZER;
  bool haveConfig = false;
  std::string configName;
  std::string logValues[4];
  bool logSet[4] = {};
  constexpr const char* kLogVariables[4] = {"LOOM_DEBUG", "LOOM_DEBUG_SUBSYS", "LOOM_DEBUG_FILE",
                                            "LOOM_DEBUG_TIMESTAMP_FORMAT"};
  std::string text(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string name = line.substr(0, eq), value = line.substr(eq + 1);
    if (name == "config.size") {
      // Never above the real size: the parser may read fields up to it.
      config.size = static_cast<size_t>(number(value)) % (sizeof(loomConfig_t) + 1);
      haveConfig = true;
    } else if (name == "config.timeoutMs") {
      config.timeoutMs = number(value);
      haveConfig = true;
    } else if (name == "config.name") {
      configName = value;
      config.name = configName.c_str();
      haveConfig = true;
    } else if (name.rfind("LOOM_DEBUG", 0) == 0) {
      for (int i = 0; i < 4; ++i)
        if (name == kLogVariables[i]) logValues[i] = value.substr(0, value.find('\0')), logSet[i] = true;
    } else if (known(name) && value.find('\0') == std::string::npos) {
      setenv(name.c_str(), value.c_str(), 1);
    }
  }

  auto arg = [&](int i) { return logSet[i] ? logValues[i].c_str() : nullptr; };
  loom::LogSettings log = loom::parseLogSettings(arg(0), arg(1), arg(2), arg(3));
  if (log.level < loom::LogLevel::kNone || log.level > loom::LogLevel::kTrace) std::abort();
  if (log.subsystemsExcluded && log.subsystems.empty()) std::abort();  // "^" with nothing would hide everything
  for (const std::string& s : log.subsystems) {
    bool listed = false;
    for (const char* known : loom::kLogSubsystems) listed |= s == known;
    if (!listed) std::abort();  // unknown names are reported, never kept
  }

  try {
    loom::CommConfig c = loom::readCommConfig(haveConfig ? &config : nullptr);
    // The documented ranges (README's table) are what the rest of Loom relies on.
    if (c.timeoutMs < 1 || c.yieldMicros < -1) std::abort();
    if (c.kinds.size() != loom::transportKinds().size()) std::abort();
    for (const auto& kind : c.kinds) {
      const loom::SlotShape shape = kind->slotShape();
      if (shape.bytes < 4096 || shape.bytes > (64u << 20) || shape.bytes % 64 != 0 || shape.slots < 2 ||
          shape.slots > 1024)
        std::abort();
    }
  } catch (const loom::Error&) {
  }
  (void)loom::topologyFileFromEnvironment();
  try {
    const loom::bootstrap::InterfaceRequest request = loom::socketRequest();
    // A list that parsed names something, and never an empty name.
    if (request.list && request.list->names.empty()) std::abort();
    if (request.list)
      for (const std::string& name : request.list->names)
        if (name.empty()) std::abort();
    (void)request.describe();
  } catch (const loom::Error&) {
  }
  try {
    loom::LaunchEnvironment launch = loom::readLaunchEnvironment();
    if (launch.rank < 0 || launch.rank >= launch.nranks || launch.masterPort < 1 || launch.masterPort > 65535)
      std::abort();
    (void)loom::bootstrap::secretFromText(launch.secret);
  } catch (const loom::Error&) {
  }
  return 0;
}

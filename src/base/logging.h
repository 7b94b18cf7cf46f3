// One logger for all of Loom, shaped like NCCL's so its users read it
// without a manual:
//   LOOM_DEBUG=VERSION|WARN|INFO|TRACE (any case) picks the level,
//   LOOM_DEBUG_SUBSYS=INIT,COLL (or ^COLL, or ALL) the subsystems,
//   LOOM_DEBUG_FILE=/tmp/loom.%h.%p sends lines to a file per host and pid,
//   LOOM_DEBUG_TIMESTAMP_FORMAT sets the strftime prefix ("[%F %T] ").
// A line reads `[2026-12-01 03:30:00] host:pid:tid [rank] LOOM INFO INIT text`.
// The first line a process prints at INFO is the banner (version, build,
// hwloc), followed by every LOOM_* variable that is set (subsystem ENV).
#pragma once

#include <atomic>
#include <sstream>
#include <string>
#include <vector>

namespace loom {

// VERSION prints the banner alone; each level includes the ones above it.
enum class LogLevel { kNone = 0, kVersion = 1, kWarn = 2, kInfo = 3, kTrace = 4 };

// The subsystems a line can belong to; LOOM_DEBUG_SUBSYS names them.
inline constexpr const char* kLogSubsystems[] = {"INIT", "BOOTSTRAP", "ENV", "TUNING", "COLL", "GRAPH", "SHM", "TCP"};

bool logEnabled(LogLevel level, const char* subsys);
// The most verbose level enabled, once the settings are read (kTrace until
// then): lets a disabled line cost one load on paths like a blocking call.
extern std::atomic<int> logLevelCeiling;
void logLine(LogLevel level, const char* subsys, int rank, const std::string& message);

// What a process's first lines at INFO say: the banner (which Loom, built
// how, with which hwloc) and every LOOM_* variable that is set. Only the
// layers above know them, so core installs them (core/version_banner.h)
// as the library loads and again at communicator init.
struct LogStartup {
  std::string (*banner)() = nullptr;
  std::vector<std::string> (*variables)() = nullptr;
};
void installLogStartup(const LogStartup& startup);

// Prints the banner and the LOOM_* variables once per process if the level
// asks for them; communicator init calls it so that LOOM_DEBUG=VERSION shows
// the version even when nothing else is logged.
void logStartup();

}  // namespace loom

// Builds the message only when the line will be printed.
#define LOOM_LOG(level, subsys, rank, stream_expr)                                            \
  do {                                                                                        \
    if (static_cast<int>(level) <= ::loom::logLevelCeiling.load(std::memory_order_relaxed) && \
        ::loom::logEnabled(level, subsys)) {                                                  \
      std::ostringstream loom_log_os_;                                                        \
      loom_log_os_ << stream_expr;                                                            \
      ::loom::logLine(level, subsys, rank, loom_log_os_.str());                               \
    }                                                                                         \
  } while (0)

#define LOOM_WARN(subsys, rank, s) LOOM_LOG(::loom::LogLevel::kWarn, subsys, rank, s)
#define LOOM_INFO(subsys, rank, s) LOOM_LOG(::loom::LogLevel::kInfo, subsys, rank, s)
#define LOOM_TRACE(subsys, rank, s) LOOM_LOG(::loom::LogLevel::kTrace, subsys, rank, s)

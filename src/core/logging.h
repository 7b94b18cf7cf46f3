// One logger for all of Loom: LOOM_DEBUG=WARN|INFO|TRACE picks the level,
// LOOM_DEBUG_SUBSYS=INIT,BOOTSTRAP,SHM,COLL (or ALL) the subsystems. Lines go
// to stderr as `host:pid [rank] LOOM LEVEL SUBSYS message`.
#pragma once

#include <sstream>
#include <string>

namespace loom {

enum class LogLevel { kNone = 0, kWarn = 1, kInfo = 2, kTrace = 3 };

bool logEnabled(LogLevel level, const char* subsys);
void logLine(LogLevel level, const char* subsys, int rank, const std::string& message);

}  // namespace loom

// Builds the message only when the line will be printed.
#define LOOM_LOG(level, subsys, rank, stream_expr)              \
  do {                                                          \
    if (::loom::logEnabled(level, subsys)) {                    \
      std::ostringstream loom_log_os_;                          \
      loom_log_os_ << stream_expr;                              \
      ::loom::logLine(level, subsys, rank, loom_log_os_.str()); \
    }                                                           \
  } while (0)

#define LOOM_WARN(subsys, rank, s) LOOM_LOG(::loom::LogLevel::kWarn, subsys, rank, s)
#define LOOM_INFO(subsys, rank, s) LOOM_LOG(::loom::LogLevel::kInfo, subsys, rank, s)
#define LOOM_TRACE(subsys, rank, s) LOOM_LOG(::loom::LogLevel::kTrace, subsys, rank, s)

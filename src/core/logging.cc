#include "core/logging.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "core/config.h"

namespace loom {
namespace {

const char* levelName(LogLevel level) {
  switch (level) {
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kTrace: return "TRACE";
    default: return "";
  }
}

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "unknown-host";
  return name;
}

}  // namespace

bool logEnabled(LogLevel level, const char* subsys) {
  const LogSettings& settings = logSettings();
  if (static_cast<int>(level) > static_cast<int>(settings.level)) return false;
  if (settings.subsystems.empty()) return true;
  for (const std::string& s : settings.subsystems)
    if (s == subsys) return true;
  return false;
}

void logLine(LogLevel level, const char* subsys, int rank, const std::string& message) {
  static const std::string host = hostName();
  char rankText[16];
  if (rank >= 0)
    std::snprintf(rankText, sizeof(rankText), "%d", rank);
  else
    std::snprintf(rankText, sizeof(rankText), "-");
  // One fprintf per line so lines from threads of one process do not interleave.
  std::fprintf(stderr, "%s:%d [%s] LOOM %s %s %s\n", host.c_str(), static_cast<int>(getpid()), rankText,
               levelName(level), subsys, message.c_str());
}

}  // namespace loom

#include "base/logging.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

#include "base/log_settings.h"

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

// LOOM_DEBUG_FILE's %h (host), %p (pid) and %% as NCCL_DEBUG_FILE expands
// them; any other %x is kept as written.
std::string expandFileName(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 == pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char next = pattern[++i];
    if (next == 'h')
      out += hostName();
    else if (next == 'p')
      out += std::to_string(getpid());
    else if (next == '%')
      out += '%';
    else
      out += std::string("%") + next;
  }
  return out;
}

// Where lines go: LOOM_DEBUG_FILE when it opens, else stderr. Opened on the
// first line so a process that logs nothing creates no file.
FILE* sink() {
  static FILE* const file = [] {
    const LogSettings& settings = logSettings();
    if (settings.fileTemplate.empty()) return stderr;
    const std::string name = expandFileName(settings.fileTemplate);
    FILE* opened = std::fopen(name.c_str(), "w");
    if (opened == nullptr) {
      std::fprintf(stderr, "LOOM WARN LOOM_DEBUG_FILE: cannot open '%s' for writing (%s); logging to stderr\n",
                   name.c_str(), std::strerror(errno));
      return stderr;
    }
    setvbuf(opened, nullptr, _IOLBF, 0);  // a line is whole on disk when the process dies
    return opened;
  }();
  return file;
}

// The strftime prefix; "%Nf" (N = 1..9) adds N digits of the second's fraction, as NCCL's does.
std::string timestamp(const std::string& format) {
  if (format.empty()) return "";
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  std::string pattern = format;
  for (size_t i = 0; i + 2 < pattern.size(); ++i) {
    if (pattern[i] == '%' && pattern[i + 1] == '%') {
      ++i;
    } else if (pattern[i] == '%' && pattern[i + 1] >= '1' && pattern[i + 1] <= '9' && pattern[i + 2] == 'f') {
      const int digits = pattern[i + 1] - '0';
      char fraction[16];
      std::snprintf(fraction, sizeof(fraction), "%09ld", now.tv_nsec);
      pattern.replace(i, 3, std::string(fraction, digits));
      break;
    }
  }
  tm local{};
  localtime_r(&now.tv_sec, &local);
  char text[256];
  size_t length = std::strftime(text, sizeof(text), pattern.c_str(), &local);
  if (length == 0) length = std::strftime(text, sizeof(text), "[%F %T] ", &local);
  return std::string(text, length);
}

bool subsystemSelected(const LogSettings& settings, const char* subsys) {
  if (settings.subsystems.empty()) return true;
  bool listed = false;
  for (const std::string& s : settings.subsystems)
    if (s == subsys) listed = true;
  return listed != settings.subsystemsExcluded;
}

void writeLine(LogLevel level, const char* subsys, int rank, const std::string& message) {
  static const std::string host = hostName();
  thread_local const long tid = syscall(SYS_gettid);
  char rankText[16];
  if (rank >= 0)
    std::snprintf(rankText, sizeof(rankText), "%d", rank);
  else
    std::snprintf(rankText, sizeof(rankText), "-");
  // One fprintf per line so lines from threads of one process do not interleave.
  std::fprintf(sink(), "%s%s:%d:%ld [%s] LOOM %s %s %s\n", timestamp(logSettings().timestampFormat).c_str(),
               host.c_str(), static_cast<int>(getpid()), tid, rankText, levelName(level), subsys, message.c_str());
}

std::once_flag startupOnce;
std::atomic<std::string (*)()> bannerSource{nullptr};
std::atomic<std::vector<std::string> (*)()> variablesSource{nullptr};

std::string banner() {
  auto source = bannerSource.load(std::memory_order_acquire);
  return source != nullptr ? source() : "Loom (version unknown: nothing installed the banner)";
}

void printStartup(int rank) {
  const LogSettings& settings = logSettings();
  // Malformed logging variables are said at every level but NONE: the user
  // asked for logs and would otherwise not know why none came.
  if (settings.level != LogLevel::kNone)
    for (const std::string& problem : settings.problems) std::fprintf(stderr, "LOOM WARN %s\n", problem.c_str());
  if (settings.level == LogLevel::kVersion) {
    std::fprintf(sink(), "%s\n", banner().c_str());
    return;
  }
  if (static_cast<int>(settings.level) < static_cast<int>(LogLevel::kInfo)) return;
  // The banner is the first INFO line whatever the subsystem filter says:
  // it is what a bug report needs first.
  writeLine(LogLevel::kInfo, "INIT", rank, banner());
  if (!subsystemSelected(settings, "ENV")) return;
  auto variables = variablesSource.load(std::memory_order_acquire);
  if (variables == nullptr) return;
  for (const std::string& variable : variables()) {
    const size_t equals = variable.find('=');
    writeLine(LogLevel::kInfo, "ENV", rank,
              variable.substr(0, equals) + " set by environment to " + variable.substr(equals + 1));
  }
}

}  // namespace

std::atomic<int> logLevelCeiling{static_cast<int>(LogLevel::kTrace)};

bool logEnabled(LogLevel level, const char* subsys) {
  const LogSettings& settings = logSettings();
  logLevelCeiling.store(static_cast<int>(settings.level), std::memory_order_relaxed);
  if (static_cast<int>(level) > static_cast<int>(settings.level)) return false;
  // A warning shows whatever subsystems were picked, as NCCL's do: a user
  // who narrowed INFO to INIT still hears what went wrong elsewhere.
  return level == LogLevel::kWarn || subsystemSelected(settings, subsys);
}

void installLogStartup(const LogStartup& startup) {
  bannerSource.store(startup.banner, std::memory_order_release);
  variablesSource.store(startup.variables, std::memory_order_release);
}

void logStartup() {
  std::call_once(startupOnce, printStartup, -1);
}

void logLine(LogLevel level, const char* subsys, int rank, const std::string& message) {
  std::call_once(startupOnce, printStartup, rank);
  writeLine(level, subsys, rank, message);
}

}  // namespace loom

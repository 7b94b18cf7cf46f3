// LOOM_DEBUG, LOOM_DEBUG_SUBSYS, LOOM_DEBUG_FILE and
// LOOM_DEBUG_TIMESTAMP_FORMAT, as base/logging.h describes them.
#pragma once

#include <string>
#include <vector>

#include "base/logging.h"

namespace loom {

struct LogSettings {
  LogLevel level = LogLevel::kWarn;          // LOOM_DEBUG
  std::vector<std::string> subsystems;       // LOOM_DEBUG_SUBSYS, upper case; empty: all
  bool subsystemsExcluded = false;           // "^A,B": every subsystem but these
  std::string fileTemplate;                  // LOOM_DEBUG_FILE, before %h/%p expansion; empty: stderr
  std::string timestampFormat = "[%F %T] ";  // LOOM_DEBUG_TIMESTAMP_FORMAT; empty: none
  std::vector<std::string> problems;         // sentences about malformed values, printed once
};

// Read once per process.
const LogSettings& logSettings();

// Parses the logging variables from the values given (nullptr: unset); the
// environment-free core of logSettings(), which fuzzers and tests call.
LogSettings parseLogSettings(const char* debug, const char* subsys, const char* file, const char* timestampFormat);

}  // namespace loom

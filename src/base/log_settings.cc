// The logger's own settings, read from the environment the first time a
// line is considered: every layer logs, from before any communicator (and
// its configuration, core/config.h) exists.
#include "base/log_settings.h"

#include <cctype>
#include <cstdlib>

namespace loom {
namespace {

std::vector<std::string> splitCommas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

std::string upperCase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

bool knownSubsystem(const std::string& name) {
  for (const char* known : kLogSubsystems)
    if (name == known) return true;
  return false;
}

}  // namespace

LogSettings parseLogSettings(const char* debug, const char* subsys, const char* file, const char* timestampFormat) {
  LogSettings settings;
  if (debug != nullptr && debug[0] != '\0') {
    const std::string level = upperCase(debug);
    if (level == "NONE")
      settings.level = LogLevel::kNone;
    else if (level == "VERSION")
      settings.level = LogLevel::kVersion;
    else if (level == "WARN")
      settings.level = LogLevel::kWarn;
    else if (level == "INFO")
      settings.level = LogLevel::kInfo;
    else if (level == "TRACE")
      settings.level = LogLevel::kTrace;
    else
      settings.problems.push_back(std::string("LOOM_DEBUG='") + debug +
                                  "' is not one of NONE, VERSION, WARN, INFO, TRACE; using WARN");
  }
  if (subsys != nullptr && subsys[0] != '\0') {
    std::string list = upperCase(subsys);
    if (list[0] == '^') {
      settings.subsystemsExcluded = true;
      list.erase(0, 1);
    }
    for (const std::string& name : splitCommas(list)) {
      if (name == "ALL") {
        settings.subsystems.clear();
        break;
      }
      if (knownSubsystem(name))
        settings.subsystems.push_back(name);
      else
        settings.problems.push_back("LOOM_DEBUG_SUBSYS names '" + name +
                                    "', which is not one of ALL, INIT, BOOTSTRAP, ENV, TUNING, COLL, GRAPH, SHM; "
                                    "ignoring that name");
    }
    // "^ALL" or a list of unknown names only: nothing to exclude, all shown.
    if (settings.subsystems.empty()) settings.subsystemsExcluded = false;
  }
  if (file != nullptr) settings.fileTemplate = file;
  if (timestampFormat != nullptr) {
    // As NCCL: underscores stand for spaces, which are awkward in job scripts.
    settings.timestampFormat = timestampFormat;
    for (char& c : settings.timestampFormat)
      if (c == '_') c = ' ';
  }
  return settings;
}

const LogSettings& logSettings() {
  static const LogSettings settings =
      parseLogSettings(std::getenv("LOOM_DEBUG"), std::getenv("LOOM_DEBUG_SUBSYS"), std::getenv("LOOM_DEBUG_FILE"),
                       std::getenv("LOOM_DEBUG_TIMESTAMP_FORMAT"));
  return settings;
}

}  // namespace loom

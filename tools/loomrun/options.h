// loomrun's command line: the options, their help text, and the checks that
// turn a bad word into one clear sentence (exit status 2) before anything
// is started.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace loom::tools::loomrun {

constexpr int kMaxRanks = 1024;

extern const char kUsage[];

struct Options {
  int ranks = 0;
  bool tagOutput = false;
  bool bindToCore = true;
  std::optional<double> timeoutSeconds;
  std::string timeoutText;  // as the user wrote it, for the timeout message
  std::vector<std::string> command;
  bool showHelp = false;
  bool showVersion = false;
};

// A sentence saying what is wrong with the command line, without the final
// period (the caller adds it).
struct UsageError {
  std::string sentence;
};

// Throws UsageError. -h/--help and -V/--version end parsing at once and
// return with showHelp/showVersion set.
Options parseCommandLine(int argc, char** argv);

}  // namespace loom::tools::loomrun

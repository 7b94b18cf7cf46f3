#include "options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <utility>

namespace loom::tools::loomrun {

const char kUsage[] =
    "Usage: loomrun -n N [--tag-output] [--timeout SECONDS] [--bind-to core|none] [--] CMD [ARGS...]\n"
    "\n"
    "Start N local ranks of CMD and supervise them as one job. Each rank gets\n"
    "torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
    "GROUP_RANK=0, MASTER_ADDR=127.0.0.1, MASTER_PORT=<a free port>) and a\n"
    "LOOM_SECRET shared by the ranks of this job only. If a rank fails, the\n"
    "others are sent SIGTERM, and SIGKILL 3 seconds later.\n"
    "\n"
    "Options (before CMD):\n"
    "  -n, -np, --np N     number of ranks to start, 1 to 1024\n"
    "  --tag-output        prefix every line the ranks print with \"[RANK] \"\n"
    "  --timeout SECONDS   stop all ranks and exit 124 after SECONDS\n"
    "  --bind-to core|none core (default): pin rank i to the i-th CPU loomrun may\n"
    "                      use, round robin, as mpirun --bind-to core; none: leave\n"
    "                      ranks unbound. Loom orders its ring by where ranks are\n"
    "                      bound.\n"
    "  -h, --help          print this help and exit\n"
    "  -V, --version       print loomrun's version (Loom's) and exit\n"
    "  --                  end of options; the next word is CMD\n"
    "\n"
    "Exit status: 0 if every rank exited 0; otherwise the status of the first\n"
    "rank that failed (128+S if it was killed by signal S), 124 on timeout,\n"
    "128+S if loomrun received signal S, 2 for bad usage.\n";

namespace {

bool isAllDigits(std::string_view text) {
  if (text.empty()) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

int parseRankCount(const std::string& text) {
  // Long digit strings are out of range anyway; checking the length first
  // keeps strtol from overflowing.
  if (isAllDigits(text) && text.size() <= 5) {
    const long value = std::strtol(text.c_str(), nullptr, 10);
    if (value >= 1 && value <= kMaxRanks) return static_cast<int>(value);
  }
  throw UsageError{"the number of ranks must be a whole number from 1 to " + std::to_string(kMaxRanks) + ", not '" +
                   text + "'"};
}

double parseTimeout(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(text.c_str(), &end);
  // The upper bound keeps the deadline arithmetic far from overflow.
  if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(value) || value <= 0 || value > 1e8) {
    throw UsageError{"--timeout needs a positive number of seconds, not '" + text + "'"};
  }
  return value;
}

// Splits "--np=4" into ("--np", "4"); other words come back unchanged.
std::pair<std::string, std::optional<std::string>> splitInlineValue(const std::string& arg) {
  const auto equals = arg.find('=');
  if (arg.rfind("--", 0) != 0 || equals == std::string::npos) return {arg, std::nullopt};
  return {arg.substr(0, equals), arg.substr(equals + 1)};
}

}  // namespace

Options parseCommandLine(int argc, char** argv) {
  Options options;
  bool haveRankCount = false;
  int index = 1;
  // Takes the option's value from "--name=value" or from the next word.
  auto takeValue = [&](const std::string& name, const std::optional<std::string>& inlineValue,
                       const std::string& what) {
    if (inlineValue) return *inlineValue;
    if (index + 1 >= argc) throw UsageError{"option " + name + " needs " + what};
    return std::string(argv[++index]);
  };

  for (; index < argc; ++index) {
    const std::string arg = argv[index];
    if (arg == "--") {
      ++index;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;  // the first word of CMD
    const auto [name, inlineValue] = splitInlineValue(arg);
    if (name == "-h" || name == "--help") {
      options.showHelp = true;
      return options;
    } else if (name == "--version" || name == "-V") {
      options.showVersion = true;
      return options;
    } else if (name == "--tag-output" && !inlineValue) {
      options.tagOutput = true;
    } else if (name == "-n" || name == "-np" || name == "--np") {
      options.ranks = parseRankCount(takeValue(name, inlineValue, "the number of ranks"));
      haveRankCount = true;
    } else if (name == "--bind-to") {
      const std::string policy = takeValue(name, inlineValue, "core or none");
      if (policy != "core" && policy != "none") throw UsageError{"--bind-to takes core or none, not '" + policy + "'"};
      options.bindToCore = policy == "core";
    } else if (name == "--timeout") {
      options.timeoutText = takeValue(name, inlineValue, "a number of seconds");
      options.timeoutSeconds = parseTimeout(options.timeoutText);
    } else {
      throw UsageError{"unknown option '" + arg + "' (options go before the command; see loomrun --help)"};
    }
  }

  if (!haveRankCount) throw UsageError{"the number of ranks is missing; pass it as -n N"};
  for (; index < argc; ++index) options.command.emplace_back(argv[index]);
  if (options.command.empty()) {
    throw UsageError{"no command given; put it after the options, as in loomrun -n 2 -- ./program"};
  }
  return options;
}

}  // namespace loom::tools::loomrun

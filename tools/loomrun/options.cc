#include "options.h"

#include <getopt.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

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

// Loom's long-only options, past the range of short-option characters (as
// perf/perf_options.cc numbers its own).
enum : int { kOptTagOutput = 256, kOptTimeout, kOptBindTo };

// "+": stop at the first word of CMD, so that CMD's own options are never
// taken for loomrun's, as mpirun and torchrun do. ":": a missing value comes
// back as ':' instead of getopt printing its own message; loomrun says it
// in its own words, on one line.
constexpr char kShortOptions[] = "+:n:hV";

// --help and --version take an optional value that is ignored: "--help=x"
// has always shown the help.
const option kLongOptions[] = {{"np", required_argument, nullptr, 'n'},
                               {"tag-output", no_argument, nullptr, kOptTagOutput},
                               {"timeout", required_argument, nullptr, kOptTimeout},
                               {"bind-to", required_argument, nullptr, kOptBindTo},
                               {"help", optional_argument, nullptr, 'h'},
                               {"version", optional_argument, nullptr, 'V'},
                               {nullptr, 0, nullptr, 0}};

// The one-dash spellings: the short options, and -np as mpirun writes it
// (getopt_long_only reads it as the long option "np").
constexpr std::string_view kOneDashSpellings[] = {"-n", "-np", "-h", "-V"};

// getopt_long_only would also accept words that loomrun has always refused
// with status 2, and scripts may rely on that: abbreviations (--tag),
// bundles (-hV), attached values (-n4, -n=4), one-dash long names
// (-timeout) and "-" alone. So an option word must be one of the spellings
// above, or "--NAME" or "--NAME=VALUE" (for an option that takes a value)
// with NAME in full.
bool isSpelledOut(std::string_view word) {
  for (const std::string_view spelling : kOneDashSpellings) {
    if (word == spelling) return true;
  }
  if (word.substr(0, 2) != "--") return false;
  const std::size_t equals = word.find('=');
  const std::string_view name = word.substr(2, equals == std::string_view::npos ? equals : equals - 2);
  for (const option* o = kLongOptions; o->name != nullptr; ++o) {
    if (name == o->name) return equals == std::string_view::npos || o->has_arg != no_argument;
  }
  return false;
}

UsageError unknownOption(const std::string& word) {
  return UsageError{"unknown option '" + word + "' (options go before the command; see loomrun --help)"};
}

// For "option NAME needs WHAT".
std::string valueDescription(int id) {
  switch (id) {
    case 'n': return "the number of ranks";
    case kOptBindTo: return "core or none";
    case kOptTimeout: return "a number of seconds";
    default: return "a value";
  }
}

}  // namespace

Options parseCommandLine(int argc, char** argv) {
  Options options;
  bool haveRankCount = false;
  for (;;) {
    // Every option is a word of its own (isSpelledOut), so each call reads
    // argv[optind], and the word after it when that is the value.
    const std::string word = optind < argc ? argv[optind] : "";
    if (word.size() > 0 && word[0] == '-' && word != "--" && !isSpelledOut(word)) throw unknownOption(word);
    const int c = getopt_long_only(argc, argv, kShortOptions, kLongOptions, nullptr);
    if (c == -1) break;  // "--" (consumed) or the first word of CMD
    switch (c) {
      case 'h': options.showHelp = true; return options;
      case 'V': options.showVersion = true; return options;
      case 'n':
        options.ranks = parseRankCount(optarg);
        haveRankCount = true;
        break;
      case kOptTagOutput: options.tagOutput = true; break;
      case kOptBindTo: {
        const std::string policy = optarg;
        if (policy != "core" && policy != "none")
          throw UsageError{"--bind-to takes core or none, not '" + policy + "'"};
        options.bindToCore = policy == "core";
        break;
      }
      case kOptTimeout:
        options.timeoutText = optarg;
        options.timeoutSeconds = parseTimeout(options.timeoutText);
        break;
      case ':': throw UsageError{"option " + word + " needs " + valueDescription(optopt)};
      default: throw unknownOption(word);
    }
  }

  if (!haveRankCount) throw UsageError{"the number of ranks is missing; pass it as -n N"};
  for (int index = optind; index < argc; ++index) options.command.emplace_back(argv[index]);
  if (options.command.empty()) {
    throw UsageError{"no command given; put it after the options, as in loomrun -n 2 -- ./program"};
  }
  return options;
}

}  // namespace loom::tools::loomrun

#include "options.h"

#include <getopt.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace loom::tools::loomrun {

const char kUsage[] =
    "Usage: loomrun -n N [--tag-output] [--timeout SECONDS] [--bind-to core|none]\n"
    "               [--nnodes K --node-rank R --master-addr A --master-port P]\n"
    "               [--] CMD [ARGS...]\n"
    "\n"
    "Start N ranks of CMD on this machine and supervise them as one job. Each rank\n"
    "gets torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,\n"
    "GROUP_RANK, GROUP_WORLD_SIZE, ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR,\n"
    "MASTER_PORT) and a LOOM_SECRET shared by the ranks of this job only. If a\n"
    "rank fails, the others are sent SIGTERM, and SIGKILL 3 seconds later.\n"
    "\n"
    "Several nodes, as torchrun's static rendezvous: run one loomrun per node, all\n"
    "with the same -n, --nnodes, --master-addr and --master-port, each with its own\n"
    "--node-rank. Node R runs RANK R*N to R*N+N-1 (GROUP_RANK R); rank 0, on node 0,\n"
    "listens at MASTER_ADDR:MASTER_PORT. Each loomrun supervises its own node's\n"
    "ranks. For nodes of unequal sizes (torchrun has no such form), give every node\n"
    "one count per node, -n N0,N1,...: node R starts NR ranks, numbered after those\n"
    "of nodes 0 to R-1.\n"
    "\n"
    "The nodes' ranks must share their secret: loomrun passes on the LOOM_SECRET of\n"
    "its environment (set the same one on every node); without one, Loom derives\n"
    "the secret from MASTER_ADDR:MASTER_PORT, so anyone who can reach that port may\n"
    "join, as with torchrun's store. With one node, LOOM_SECRET is always fresh.\n"
    "\n"
    "Options (before CMD):\n"
    "  -n, -np, --np, --nproc-per-node N\n"
    "                      number of ranks to start on this node, 1 to 1024 (or\n"
    "                      N0,N1,... with one count per node, as above)\n"
    "  --nnodes K          number of nodes in the job, 1 (default) to 65536\n"
    "  --node-rank R       this node's rank, 0 (default) to K-1\n"
    "  --master-addr A     address or host name of node 0, where rank 0 listens\n"
    "                      (default 127.0.0.1)\n"
    "  --master-port P     the port rank 0 listens on, 1 to 65535 (default: a free\n"
    "                      port with one node; 29500, torchrun's, with several)\n"
    "                      torchrun's spellings --nproc_per_node, --node_rank,\n"
    "                      --master_addr and --master_port work too\n"
    "  --tag-output        prefix every line the ranks print with \"[RANK] \"\n"
    "  --timeout SECONDS   stop this node's ranks and exit 124 after SECONDS\n"
    "  --bind-to core|none core (default): pin local rank i to the i-th CPU loomrun\n"
    "                      may use, round robin, as mpirun --bind-to core; none:\n"
    "                      leave ranks unbound. Loom orders its ring by where ranks\n"
    "                      are bound.\n"
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

// A whole number from low to high, or nothing. Long digit strings are out
// of range anyway; checking the length first keeps strtol from overflowing.
std::optional<long> parseWholeNumber(const std::string& text, long low, long high) {
  if (!isAllDigits(text) || text.size() > 9) return std::nullopt;
  const long value = std::strtol(text.c_str(), nullptr, 10);
  if (value < low || value > high) return std::nullopt;
  return value;
}

// "N", or "N0,N1,..." with one count per node.
std::vector<int> parseRankCounts(const std::string& text) {
  const std::string range = "a whole number from 1 to " + std::to_string(kMaxRanks);
  if (text.find(',') == std::string::npos) {
    if (auto value = parseWholeNumber(text, 1, kMaxRanks)) return {static_cast<int>(*value)};
    throw UsageError{"the number of ranks must be " + range + ", not '" + text + "'"};
  }
  std::vector<int> counts;
  std::size_t start = 0;
  // Each turn consumes one item and its comma: at most text.size() turns.
  for (;;) {
    const std::size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    const auto value = parseWholeNumber(item, 1, kMaxRanks);
    if (!value) {
      throw UsageError{"-n " + text + ": each node's number of ranks must be " + range + ", not '" + item + "'"};
    }
    counts.push_back(static_cast<int>(*value));
    if (comma == std::string::npos) return counts;
    start = comma + 1;
  }
}

// torchrun also takes "MIN:MAX" for elastic jobs; "K:K" is the same fixed
// size (torchrun's default is written "1:1"), a real range is not.
int parseNodeCount(const std::string& text) {
  std::string count = text;
  if (const std::size_t colon = text.find(':'); colon != std::string::npos) {
    const std::string low = text.substr(0, colon);
    const std::string high = text.substr(colon + 1);
    if (low != high || !parseWholeNumber(low, 1, kMaxNodes)) {
      throw UsageError{"--nnodes takes one number of nodes; loomrun starts a fixed number of nodes and has no "
                       "elastic range such as '" +
                       text + "'"};
    }
    count = low;
  }
  if (auto value = parseWholeNumber(count, 1, kMaxNodes)) return static_cast<int>(*value);
  throw UsageError{"--nnodes needs a whole number of nodes from 1 to " + std::to_string(kMaxNodes) + ", not '" +
                   text + "'"};
}

// Checked against --nnodes once every option is read.
int parseNodeRank(const std::string& text) {
  if (auto value = parseWholeNumber(text, 0, kMaxNodes - 1)) return static_cast<int>(*value);
  throw UsageError{"--node-rank needs a whole number from 0 to the number of nodes less one, not '" + text + "'"};
}

int parseMasterPort(const std::string& text) {
  if (auto value = parseWholeNumber(text, 1, 65535)) return static_cast<int>(*value);
  throw UsageError{"--master-port needs a port number from 1 to 65535, not '" + text + "'"};
}

// The address goes to every rank as MASTER_ADDR, and Loom resolves it there;
// what can never be an address or a host name is refused here, once.
std::string parseMasterAddr(const std::string& text) {
  if (text.empty()) throw UsageError{"--master-addr needs the address or host name of node 0, not an empty word"};
  for (const char c : text) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      throw UsageError{"--master-addr '" + text + "' contains a space or control character; give node 0's "
                       "address or host name"};
    }
  }
  return text;
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
enum : int { kOptTagOutput = 256, kOptTimeout, kOptBindTo, kOptNnodes, kOptNodeRank, kOptMasterAddr, kOptMasterPort };

// "+": stop at the first word of CMD, so that CMD's own options are never
// taken for loomrun's, as mpirun and torchrun do. ":": a missing value comes
// back as ':' instead of getopt printing its own message; loomrun says it
// in its own words, on one line.
constexpr char kShortOptions[] = "+:n:hV";

// --help and --version take an optional value that is ignored: "--help=x"
// has always shown the help.
// torchrun spells its options both with dashes and with underscores.
const option kLongOptions[] = {{"np", required_argument, nullptr, 'n'},
                               {"nproc-per-node", required_argument, nullptr, 'n'},
                               {"nproc_per_node", required_argument, nullptr, 'n'},
                               {"nnodes", required_argument, nullptr, kOptNnodes},
                               {"node-rank", required_argument, nullptr, kOptNodeRank},
                               {"node_rank", required_argument, nullptr, kOptNodeRank},
                               {"master-addr", required_argument, nullptr, kOptMasterAddr},
                               {"master_addr", required_argument, nullptr, kOptMasterAddr},
                               {"master-port", required_argument, nullptr, kOptMasterPort},
                               {"master_port", required_argument, nullptr, kOptMasterPort},
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
    case kOptNnodes: return "the number of nodes";
    case kOptNodeRank: return "this node's rank";
    case kOptMasterAddr: return "the address of node 0";
    case kOptMasterPort: return "a port number";
    default: return "a value";
  }
}

std::string joinCounts(const std::vector<int>& counts) {
  std::string text;
  for (const int count : counts) text += (text.empty() ? "" : ",") + std::to_string(count);
  return text;
}

// The checks that need more than one option, whatever their order, and what
// this node's share of the job is.
void settleNodes(Options& options) {
  if (options.nodeRank >= options.nnodes) {
    throw UsageError{"--node-rank " + std::to_string(options.nodeRank) + " is out of range: with --nnodes " +
                     std::to_string(options.nnodes) + " the node ranks are 0 to " +
                     std::to_string(options.nnodes - 1)};
  }
  std::vector<int> counts = options.rankCounts;
  if (counts.size() == 1) {
    counts.assign(options.nnodes, counts[0]);
  } else if (counts.size() != static_cast<std::size_t>(options.nnodes)) {
    throw UsageError{"-n " + joinCounts(counts) + " gives " + std::to_string(counts.size()) +
                     " numbers of ranks but --nnodes is " + std::to_string(options.nnodes) +
                     "; give one number for every node, or one per node"};
  }
  long worldSize = 0;
  long firstRank = 0;
  for (int node = 0; node < options.nnodes; ++node) {
    if (node == options.nodeRank) firstRank = worldSize;
    worldSize += counts[node];
  }
  if (worldSize > kMaxWorldSize) {
    throw UsageError{"--nnodes " + std::to_string(options.nnodes) + " with -n " + joinCounts(options.rankCounts) +
                     " makes " + std::to_string(worldSize) + " ranks; Loom takes at most " +
                     std::to_string(kMaxWorldSize) + " in one job"};
  }
  options.ranks = counts[options.nodeRank];
  options.firstRank = static_cast<int>(firstRank);
  options.worldSize = static_cast<int>(worldSize);
}

}  // namespace

Options parseCommandLine(int argc, char** argv) {
  Options options;
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
        options.rankCounts = parseRankCounts(optarg);
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
      case kOptNnodes: options.nnodes = parseNodeCount(optarg); break;
      case kOptNodeRank: options.nodeRank = parseNodeRank(optarg); break;
      case kOptMasterAddr: options.masterAddr = parseMasterAddr(optarg); break;
      case kOptMasterPort: options.masterPort = parseMasterPort(optarg); break;
      case ':': throw UsageError{"option " + word + " needs " + valueDescription(optopt)};
      default: throw unknownOption(word);
    }
  }

  if (options.rankCounts.empty()) throw UsageError{"the number of ranks is missing; pass it as -n N"};
  settleNodes(options);
  for (int index = optind; index < argc; ++index) options.command.emplace_back(argv[index]);
  if (options.command.empty()) {
    throw UsageError{"no command given; put it after the options, as in loomrun -n 2 -- ./program"};
  }
  return options;
}

}  // namespace loom::tools::loomrun

// loomrun's command line: the options, their help text, and the checks that
// turn a bad word into one clear sentence (exit status 2) before anything
// is started.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace loom::tools::loomrun {

constexpr int kMaxRanks = 1024;   // per node
constexpr int kMaxNodes = 65536;
// Loom's bootstrap takes up to 2^24 ranks in one job.
constexpr long kMaxWorldSize = 1L << 24;
// torchrun's --master-port default, for jobs of several nodes (one node
// picks a free port instead, as loomrun always has).
constexpr int kDefaultMasterPort = 29500;

extern const char kUsage[];

struct Options {
  // -n as given: one count for every node, or (loomrun's own form, for
  // nodes of unequal sizes) one per node; then what follows for this node.
  std::vector<int> rankCounts;
  int ranks = 0;      // started on this node: LOCAL_WORLD_SIZE
  int firstRank = 0;  // RANK of this node's local rank 0
  int worldSize = 0;  // WORLD_SIZE: the ranks of all nodes
  // torchrun's static rendezvous: nnodes loomruns, one per node, each told
  // its node rank and the same master address and port.
  int nnodes = 1;
  int nodeRank = 0;
  std::string masterAddr = "127.0.0.1";
  std::optional<int> masterPort;  // unset: a free port (one node), 29500 (several)
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

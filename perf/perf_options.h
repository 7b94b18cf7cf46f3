// Command-line options of the perf binaries: every nccl-tests flag, with
// its defaults and meanings, so operators' scripts carry over.
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::perf {

// nccl-tests' exit codes (its testResult_t, returned from main).
constexpr int kExitSuccess = 0;
constexpr int kExitLibraryError = 3;  // testNcclError: a Loom call failed
constexpr int kExitTimeout = 4;       // testTimeout: -T fired
constexpr int kExitWrongResults = 7;  // testNumResults: wrong data (or NCCL_TESTS_MIN_BW missed)
constexpr int kExitBadArguments = 255;  // nccl-tests' `return -1` on bad sizes

struct NamedOp {
  loomRedOp_t op;
  const char* name;
};

struct PerfOptions {
  size_t minBytes = 32 * 1024 * 1024;  // -b
  size_t maxBytes = 32 * 1024 * 1024;  // -e
  size_t stepBytes = 1024 * 1024;      // -i: used unless -f is above 1
  size_t stepFactor = 1;               // -f
  int iters = 20;                      // -n
  int aggIters = 1;                    // -m: collectives per timed iteration
  int warmupIters = 1;                 // -w
  long cycles = 1;                     // -N: 0 = forever
  int check = 1;                       // -c: check iterations per size, 0 = off
  int blocking = 0;                    // -z 0..3, as nccl-tests
  int average = 1;                     // -a: 0 rank 0, 1 avg, 2 min, 3 max
  int timeoutSeconds = 0;              // -T
  int reportCpuTime = 0;               // -C
  int reportTimestamps = 0;            // -S
  int unalign = 0;                     // -u: elements
  int registerBuffers = 0;             // -R: 1 or 2, buffers from loomMemAlloc, registered
  std::vector<loomDataType_t> dtypes{loomFloat32};  // -d
  std::vector<NamedOp> ops{{loomSum, "sum"}};       // -o
  int root = 0;                                     // -r; -1: every root
  std::string jsonPath;                             // -J
  std::string memory = "host";                      // --mem (Loom)
  bool cacheHot = false;                            // --cache_hot 1 (Loom): no rotation
  int stallRank = -1, stallMs = 0;                  // --stall RANK:MS (Loom), to see -T fire
  // Lines rank 0 prints before the header: flags accepted but ignored, and
  // nccl-tests' "invalid type/op ... defaulting" notices.
  std::vector<std::string> notices;
};

// Parses argv as nccl-tests does. Help and unknown options print the usage
// and exit 0 (as nccl-tests); bad values print a sentence and exit 255.
PerfOptions parseOptions(int argc, char** argv, const char* program, bool hasOp, bool hasRoot);

// nccl-tests' data type names, in its order (-d all runs them in this order).
const char* ncclTypeName(loomDataType_t dtype);
const std::vector<loomDataType_t>& ncclTypeOrder();

void printUsage(const char* program);

}  // namespace loom::perf

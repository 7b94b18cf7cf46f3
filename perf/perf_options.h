// Command-line options of the perf binaries: nccl-tests' flags and meanings,
// so operators' scripts carry over.
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::perf {

struct PerfOptions {
  size_t minBytes = 32 * 1024 * 1024;               // -b
  size_t maxBytes = 32 * 1024 * 1024;               // -e
  size_t stepFactor = 2;                            // -f
  size_t stepBytes = 0;                             // -i (used when stepFactor is 1... as nccl-tests: -i wins if given)
  int iters = 20;                                   // -n
  int warmupIters = 5;                              // -w
  int check = 1;                                    // -c
  int blocking = 0;                                 // -z
  int average = 1;                                  // -a: 0 rank0, 1 avg, 2 min, 3 max
  int timeoutSeconds = 0;                           // -T: 0 none
  int cycles = 1;                                   // -N
  int unalign = 0;                                  // -u: byte offset applied to buffers
  int registerBuffers = 0;                          // -R: 1 or 2, buffers from loomMemAlloc, registered
  std::vector<loomDataType_t> dtypes{loomFloat32};  // -d
  std::vector<loomRedOp_t> ops{loomSum};            // -o
  int root = 0;                                     // -r; -1: all roots
  std::string memory = "host";                      // --mem
  std::string jsonPath;                             // -J
  int stallRank = -1;                               // --stall RANK:MS, to see -T fire
  int stallMs = 0;
};

// Parses argv; on bad input prints one sentence to stderr and exits 2.
PerfOptions parseOptions(int argc, char** argv, const char* program, bool hasOp, bool hasRoot);

// "32M" -> 33554432; throws std::invalid_argument with a sentence.
size_t parseSize(const std::string& text);

const char* ncclTypeName(loomDataType_t dtype);

}  // namespace loom::perf

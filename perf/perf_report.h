// What rank 0 prints: nccl-tests' header, rows and footer, line for line,
// plus the JSON report (-J). Every method is a no-op on other ranks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "perf_json.h"
#include "perf_options.h"

namespace loom::perf {

struct RankInfo {
  int32_t pid;
  int32_t localRank;  // index among the ranks of its host: the "device" column
  char host[64];
  char cpus[64];
};

struct HalfResult {
  double seconds;  // reported time (-C: posting time)
  double algBw, busBw;
  int64_t wrong;
};

struct RunFacts {
  std::string launchedBy;
  size_t regionBytes, cacheBytes;
  bool registered;
};

class Report {
 public:
  Report(const PerfOptions& options, const char* program, bool printing, int argc, char** argv);
  void header(const std::vector<RankInfo>& ranks, const RunFacts& facts);
  void row(size_t bytes, size_t count, const char* type, const char* op, int root, const HalfResult halves[2]);
  // Prints the footer and finishes the JSON; returns the exit status.
  int footer(int checksFailed, const std::string& lastError);

 private:
  const PerfOptions& options_;
  const char* program_;
  bool printing_;
  std::unique_ptr<JsonReport> json_;
  double busBwSum_ = 0;
  long busBwCount_ = 0;
};

}  // namespace loom::perf

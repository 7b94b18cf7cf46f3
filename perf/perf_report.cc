#include "perf_report.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "perf_format.h"

namespace loom::perf {
namespace {

constexpr const char* kNcclTestsVersion = "2.19.6";  // the nccl-tests whose output this matches

int libraryVersion() {
  int version = 0;
  loomGetVersion(&version);
  return version;
}

std::string mib(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.0f MiB", bytes / 1048576.0);
  return text;
}

}  // namespace

Report::Report(const PerfOptions& options, const char* program, bool printing, int argc, char** argv)
    : options_(options), program_(program), printing_(printing) {
  if (!printing_) return;
  for (const std::string& notice : options_.notices) std::printf("%s\n", notice.c_str());
  if (!options_.jsonPath.empty())
    json_ = std::make_unique<JsonReport>(options_.jsonPath, argc, argv, libraryVersion());
}

void Report::header(const std::vector<RankInfo>& ranks, const RunFacts& facts) {
  if (!printing_) return;
  const PerfOptions& o = options_;
  const int version = libraryVersion();
  const bool factor = o.stepFactor > 1;
  std::printf("# nccl-tests version %s nccl-headers=%d nccl-library=%d\n", kNcclTestsVersion, LOOM_VERSION_CODE,
              version);
  std::printf("# Collective test starting: %s\n", program_);
  std::printf(
      "# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d agg iters: %d "
      "validation: %d graph: 0 unalign: %d\n",
      o.minBytes, o.maxBytes, factor ? o.stepFactor : o.stepBytes, factor ? "factor" : "bytes", o.warmupIters, o.iters,
      o.aggIters, o.check, o.unalign);
  if (o.blocking == 1) std::printf("# Blocking Enabled: wait and barrier after each inner iteration (-m) \n");
  if (o.blocking == 2) std::printf("# Blocking Enabled: wait after each inner iteration (-m), no barrier \n");
  if (o.blocking == 3)
    std::printf("# Blocking Enabled: wait and barrier after each outer iteration (-n); time excludes barrier \n");
  std::printf("# Loom %d.%d.%d, launched by %s\n", version / 10000, version / 100 % 100, version % 100,
              facts.launchedBy.c_str());
  if (o.cacheHot)
    std::printf("# Buffers: cache-hot (--cache_hot 1): every iteration uses the same offset\n");
  else
    std::printf("# Buffers: cache-cold: iterations rotate through %s per buffer (last-level cache %s)\n",
                mib(facts.regionBytes).c_str(), mib(facts.cacheBytes).c_str());
  std::printf("#\n# Using devices\n");
  const std::string memory = o.memory + (facts.registered ? " registered" : "") + " memory";
  std::vector<JsonDevice> devices;
  for (size_t r = 0; r < ranks.size(); ++r) {
    std::string info = memory + ", CPUs " + ranks[r].cpus;
    std::printf("#  Rank %2zu Group %2d Pid %6d on %10s device %2d [host] %s\n", r, 0, ranks[r].pid, ranks[r].host,
                ranks[r].localRank, info.c_str());
    devices.push_back({static_cast<int>(r), ranks[r].pid, ranks[r].localRank, ranks[r].host, "host", info});
  }
  if (json_) {
    auto num = [](long v) { return std::to_string(v); };
    auto boolean = [](bool v) { return jsonString(v ? "true" : "false"); };
    std::vector<std::pair<std::string, std::string>> fields = {
        {"nthreads", "1"}, {"ngpus", "1"}, {"minimum_bytes", num(o.minBytes)}, {"maximum_bytes", num(o.maxBytes)},
        {factor ? "step_factor" : "step_bytes", num(factor ? o.stepFactor : o.stepBytes)},
        {"warmup_iters", num(o.warmupIters)}, {"iterations", num(o.iters)}, {"aggregated_iterations", num(o.aggIters)},
        {"validation", num(o.check)}, {"graph", "0"}, {"blocking_collectives", boolean(o.blocking != 0)},
        {"per_iter_timing", boolean(false)}, {"per_iter_skip", "0"}, {"parallel_init", boolean(false)}};
    json_->config(fields, devices);
  }
  const char* time = o.reportCpuTime ? "cputime" : "time";
  const int tsPad = o.reportTimestamps ? 19 : 0;
  std::printf("#\n");
  std::printf("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "",
              "", "", "");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size", "count", "type",
              "redop", "root", time, "algbw", "busbw", "#wrong", time, "algbw", "busbw", "#wrong", tsPad,
              o.reportTimestamps ? "timestamp" : "");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)", "(elements)", "", "",
              "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", tsPad,
              o.reportTimestamps ? "%Y-%m-%d %H:%M:%S" : "");
  std::fflush(stdout);
}

void Report::row(size_t bytes, size_t count, const char* type, const char* op, int root, const HalfResult halves[2]) {
  for (int i = 0; i < 2; ++i) {  // every rank: the NCCL_TESTS_MIN_BW verdict decides its exit status
    busBwSum_ += halves[i].busBw;
    ++busBwCount_;
  }
  if (!printing_) return;
  const bool checked = options_.check > 0;
  std::printf("%12zu  %12zu  %8s  %6s  %6i", bytes, count, type, op, root);
  JsonHalf json[2];
  for (int i = 0; i < 2; ++i) {
    const HalfResult& h = halves[i];
    const double us = h.seconds * 1e6;
    std::printf("  %7s  %6s  %6s", fixedWidth(us, 7).c_str(), fixedWidth(h.algBw, 6).c_str(),
                fixedWidth(h.busBw, 6).c_str());
    if (checked)
      std::printf("  %s", wrongColumn(true, h.wrong).c_str());
    else
      std::printf("    N/A");
    json[i] = {us, h.algBw, h.busBw, checked, static_cast<double>(h.wrong)};
  }
  if (options_.reportTimestamps) {
    char stamp[64];
    std::time_t t = std::time(nullptr);
    std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", std::localtime(&t));
    std::printf("%21s", stamp);
  }
  std::printf("\n");
  std::fflush(stdout);
  if (json_) json_->result(bytes, count, type, op, root, json, options_.reportCpuTime != 0, options_.iters);
}

int Report::footer(int checksFailed, const std::string& lastError) {
  const char* minText = std::getenv("NCCL_TESTS_MIN_BW");  // nccl-tests' bandwidth gate, read as it does
  const double minBw = minText != nullptr ? std::atof(minText) : -1;
  const double avg = busBwCount_ ? busBwSum_ / busBwCount_ : 0.0;
  const bool bwFailed = minText != nullptr && avg < minBw * 0.9;
  if (printing_) {
    std::printf("# %-20s : %d %s\n", "Out of bounds values", checksFailed, checksFailed ? "FAILED" : "OK");
    std::printf("# %-20s : %g %s\n", "Avg bus bandwidth", avg, minText == nullptr ? "" : (bwFailed ? "FAILED" : "OK"));
    std::printf("#\n# Collective test concluded: %s\n#\n", program_);
    if (lastError.empty())
      std::printf("\n");
    else
      std::printf("# error: %s\n", lastError.c_str());
    std::fflush(stdout);
    if (json_) json_->finish(checksFailed, avg, minText == nullptr ? -1 : minBw, lastError);
  }
  return checksFailed || bwFailed ? kExitWrongResults : kExitSuccess;
}

}  // namespace loom::perf

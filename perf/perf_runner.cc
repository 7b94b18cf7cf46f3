#include "perf_runner.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "check_data.h"
#include "perf_launch.h"
#include "perf_options.h"

namespace loom::perf {
namespace {

constexpr size_t kGuardBytes = 64;  // after every receive buffer: writes past the end show
constexpr unsigned char kGuard = 0xA5;

struct RankInfo {
  int32_t pid;
  char host[60];
  char cpus[64];
};

std::string cpuList() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "?";
  std::string text;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    char range[32];
    if (last > cpu)
      std::snprintf(range, sizeof(range), "%s%d-%d", text.empty() ? "" : ",", cpu, last);
    else
      std::snprintf(range, sizeof(range), "%s%d", text.empty() ? "" : ",", cpu);
    text.append(range);
    cpu = last;
  }
  return text;
}

class PerfRun {
 public:
  PerfRun(const CollectiveSpec& spec, const PerfOptions& options, loomComm_t comm)
      : spec_(spec), options_(options), comm_(comm) {
    loomCommUserRank(comm, &rank_);
    loomCommCount(comm, &nranks_);
  }

  void printHeader(const char* program, const std::string& how) {
    RankInfo mine{};
    mine.pid = getpid();
    gethostname(mine.host, sizeof(mine.host) - 1);
    std::snprintf(mine.cpus, sizeof(mine.cpus), "%s", cpuList().c_str());
    std::vector<RankInfo> all(nranks_);
    must(loomAllGather(&mine, all.data(), sizeof(RankInfo), loomUint8, comm_, nullptr, nullptr),
         "AllGather of rank info");
    if (rank_ != 0) return;
    int version = 0;
    loomGetVersion(&version);
    std::printf("# Collective test starting: %s (Loom %d.%d.%d, launched by %s)\n", program, version / 10000,
                version / 100 % 100, version % 100, how.c_str());
    std::printf(
        "# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d agg iters: 1 "
        "validation: %d graph: 0\n#\n# Using devices\n",
        options_.minBytes, options_.maxBytes, options_.stepBytes ? options_.stepBytes : options_.stepFactor,
        options_.stepBytes ? "bytes" : "factor", options_.warmupIters, options_.iters, options_.check);
    for (int r = 0; r < nranks_; ++r)
      std::printf("#  Rank %2d Group  0 Pid %6d on %10s device  0 [host] %s%s memory, CPUs %s\n", r, all[r].pid,
                  all[r].host, options_.memory.c_str(), options_.registerBuffers ? " registered" : "", all[r].cpus);
    std::printf("#\n");
    std::printf(
        "#                                                              out-of-place                       in-place    "
        "      \n");
    std::printf(
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
        "#wrong\n");
    std::printf(
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s) "
        "      \n");
    std::fflush(stdout);
  }

  void sweep() {
    if (rank_ == options_.stallRank) std::this_thread::sleep_for(std::chrono::milliseconds(options_.stallMs));
    for (int cycle = 0; cycle < options_.cycles; ++cycle)
      for (loomDataType_t dtype : options_.dtypes)
        for (loomRedOp_t op : spec_.hasOp ? options_.ops : std::vector<loomRedOp_t>{loomSum})
          for (int root : roots())
            for (size_t bytes = options_.minBytes; bytes <= options_.maxBytes; bytes = nextSize(bytes))
              runSize(bytes, dtype, op, root);
  }

  int finish() {
    int64_t totals[2] = {wrongTotal_, outOfBounds_};
    must(loomAllReduce(totals, totals, 2, loomInt64, loomSum, comm_, nullptr, nullptr), "AllReduce of error counts");
    if (rank_ == 0) {
      std::printf("# Out of bounds values : %lld %s\n", static_cast<long long>(totals[1]), totals[1] ? "FAILED" : "OK");
      std::printf("# Avg bus bandwidth    : %g \n#\n", busbwCount_ ? busbwSum_ / busbwCount_ : 0.0);
      if (totals[0] > 0) std::printf("# %lld wrong values: FAILED\n", static_cast<long long>(totals[0]));
      writeJson();
    }
    return totals[0] == 0 && totals[1] == 0 ? 0 : 1;
  }

 private:
  struct Row {
    size_t bytes, count;
    loomDataType_t dtype;
    loomRedOp_t op;
    int root;
    double time[2], algbw[2], busbw[2];
    int64_t wrong[2];
  };

  std::vector<int> roots() const {
    if (!spec_.hasRoot) return {-1};
    if (options_.root >= 0) return {options_.root % nranks_};
    std::vector<int> all(nranks_);
    for (int r = 0; r < nranks_; ++r) all[r] = r;
    return all;
  }

  size_t nextSize(size_t bytes) const {
    if (options_.stepBytes) return bytes + options_.stepBytes;
    return bytes * options_.stepFactor;
  }

  void must(loomResult_t rc, const std::string& what) {
    if (rc == loomSuccess) return;
    std::fprintf(stderr, "perf: rank %d: %s failed: %s: %s\n", rank_, what.c_str(), loomGetErrorString(rc),
                 loomCommGetLastError(comm_));
    std::fflush(stderr);
    loomCommAbort(comm_);
    std::_Exit(1);
  }

  void runSize(size_t bytes, loomDataType_t dtype, loomRedOp_t op, int root) {
    const size_t typeSize = loomTypeSize(dtype);
    const size_t count = spec_.countFor(bytes, typeSize, nranks_);
    const size_t sendBytes = spec_.sendElements(count, nranks_) * typeSize;
    const size_t recvBytes = spec_.recvElements(count, nranks_) * typeSize;
    const size_t unalign = options_.unalign;
    const size_t block = count / nranks_ * typeSize;
    // Out of place: two buffers. In place: one, holding both as loom.h lays
    // them out; it is the larger of the two sizes.
    const size_t wholeBytes = std::max(sendBytes, recvBytes);
    Storage sendStore = makeStorage(sendBytes + unalign), recvStore = makeStorage(wholeBytes + unalign + kGuardBytes);
    unsigned char* base = recvStore.data + unalign;
    const bool reduces = spec_.hasOp;
    const std::string name = spec_.name;

    Row row{bytes, count, dtype, op, root, {}, {}, {}, {}};
    for (int inPlace = 0; inPlace < 2; ++inPlace) {
      unsigned char* in = sendStore.data + unalign;
      unsigned char* out = base;
      const bool oneBuffer = inPlace && spec_.inPlace != CollectiveSpec::InPlace::kNone;
      if (oneBuffer) {
        in = base;
        if (spec_.inPlace == CollectiveSpec::InPlace::kSendInsideRecv) in = base + rank_ * block;
        if (spec_.inPlace == CollectiveSpec::InPlace::kRecvInsideSend) out = base + rank_ * block;
      }
      unsigned char* guard = oneBuffer ? base + wholeBytes : out + recvBytes;
      CallArgs args{in, out, dtype, op, root < 0 ? 0 : root, comm_, rank_, nranks_};
      if (options_.check) {
        std::memset(out, 0, recvBytes);
        std::memset(guard, kGuard, kGuardBytes);
        fillInput(in, spec_.sendElements(count, nranks_), dtype, op, reduces, rank_);
        must(spec_.call(args, count, nullptr), name);
        row.wrong[inPlace] = countWrong(spec_, out, count, dtype, op, args.root, rank_, nranks_);
        for (size_t i = 0; i < kGuardBytes; ++i) outOfBounds_ += guard[i] != kGuard;
        wrongTotal_ += row.wrong[inPlace];
      }
      runIterations(args, count, options_.warmupIters);
      must(loomBarrier(comm_, nullptr), "Barrier");
      auto start = std::chrono::steady_clock::now();
      runIterations(args, count, options_.iters);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / options_.iters;
      row.time[inPlace] = aggregateTime(seconds);
      row.algbw[inPlace] = row.time[inPlace] > 0 ? bytes / row.time[inPlace] / 1e9 : 0;
      row.busbw[inPlace] = row.algbw[inPlace] * spec_.busFactor(nranks_);
    }
    int64_t wrong[2] = {row.wrong[0], row.wrong[1]};
    must(loomAllReduce(wrong, wrong, 2, loomInt64, loomSum, comm_, nullptr, nullptr), "AllReduce of wrong counts");
    row.wrong[0] = wrong[0];
    row.wrong[1] = wrong[1];
    if (rank_ == 0) printRow(row);
    rows_.push_back(row);
    dropStorage(recvStore);
    dropStorage(sendStore);
  }

  // One size's buffer: heap memory, or with -R memory from loomMemAlloc
  // registered with the communicator (collective: every rank makes the
  // same storages in the same order).
  struct Storage {
    unsigned char* data = nullptr;
    std::vector<unsigned char> heap;
    void* shared = nullptr;
    void* handle = nullptr;
  };

  Storage makeStorage(size_t bytes) {
    Storage storage;
    if (options_.registerBuffers == 0) {
      storage.heap.resize(bytes);
      storage.data = storage.heap.data();
      return storage;
    }
    if (loomMemAlloc(&storage.shared, std::max<size_t>(bytes, 1)) != loomSuccess) {
      std::fprintf(stderr, "perf: rank %d: loomMemAlloc of %zu bytes failed: %s\n", rank_, bytes, loomGetLastError());
      loomCommAbort(comm_);
      std::_Exit(1);
    }
    must(loomCommRegister(comm_, storage.shared, std::max<size_t>(bytes, 1), &storage.handle), "loomCommRegister");
    storage.data = static_cast<unsigned char*>(storage.shared);
    return storage;
  }

  void dropStorage(Storage& storage) {
    if (storage.handle != nullptr) must(loomCommDeregister(comm_, storage.handle), "loomCommDeregister");
    if (storage.shared != nullptr) loomMemFree(storage.shared);
    storage = Storage{};
  }

  void runIterations(const CallArgs& args, size_t count, int iterations) {
    if (options_.blocking) {
      for (int i = 0; i < iterations; ++i) must(spec_.call(args, count, nullptr), spec_.name);
      return;
    }
    std::vector<loomRequest_t> requests(iterations, nullptr);
    for (int i = 0; i < iterations; ++i) must(spec_.call(args, count, &requests[i]), spec_.name);
    // Newest first: operations complete in issue order, so once the last is
    // done the others are too and their waits return at once. Waiting
    // oldest first would wake this thread once per operation, stealing the
    // core from ranks still working when ranks outnumber cores.
    for (auto it = requests.rbegin(); it != requests.rend(); ++it) {
      loomRequest_t request = *it;
      if (request == nullptr) continue;  // nothing was posted (SendRecv on one rank)
      loomResult_t rc = loomWait(request, -1);
      if (rc != loomSuccess) {
        std::fprintf(stderr, "perf: rank %d: %s failed: %s: %s\n", rank_, spec_.name, loomGetErrorString(rc),
                     loomGetLastError());
        loomCommAbort(comm_);
        std::_Exit(1);
      }
      loomRequestFree(request);
    }
  }

  // -a: rank 0's time, or the average, minimum or maximum over ranks.
  double aggregateTime(double seconds) {
    static const loomRedOp_t kOps[] = {loomSum, loomAvg, loomMin, loomMax};
    double value = (options_.average == 0 && rank_ != 0) ? 0.0 : seconds;
    must(loomAllReduce(&value, &value, 1, loomFloat64, kOps[options_.average], comm_, nullptr, nullptr),
         "AllReduce of times");
    return value;
  }

  void printRow(const Row& row) {
    std::printf("%12zu  %12zu  %8s  %6s  %6d", row.bytes, row.count, ncclTypeName(row.dtype),
                spec_.hasOp ? loomOpName(row.op) : "none", row.root);
    for (int i = 0; i < 2; ++i) {
      double us = row.time[i] * 1e6;
      std::printf(us < 10000 ? "  %7.2f" : "  %7.0f", us);
      std::printf("  %6.2f  %6.2f  %6lld", row.algbw[i], row.busbw[i], static_cast<long long>(row.wrong[i]));
      busbwSum_ += row.busbw[i];
      ++busbwCount_;
    }
    std::printf("\n");
    std::fflush(stdout);
  }

  void writeJson() {
    if (options_.jsonPath.empty()) return;
    FILE* out = std::fopen(options_.jsonPath.c_str(), "w");
    if (out == nullptr) {
      std::fprintf(stderr, "perf: cannot write %s: %s\n", options_.jsonPath.c_str(), std::strerror(errno));
      return;
    }
    std::fprintf(out, "{\"collective\": \"%s\", \"nranks\": %d, \"results\": [\n", spec_.name, nranks_);
    for (size_t i = 0; i < rows_.size(); ++i) {
      const Row& r = rows_[i];
      std::fprintf(out,
                   "  {\"size\": %zu, \"count\": %zu, \"type\": \"%s\", \"redop\": \"%s\", \"root\": %d, "
                   "\"out_of_place\": {\"time_us\": %.3f, \"algbw\": %.4f, \"busbw\": %.4f, \"wrong\": %lld}, "
                   "\"in_place\": {\"time_us\": %.3f, \"algbw\": %.4f, \"busbw\": %.4f, \"wrong\": %lld}}%s\n",
                   r.bytes, r.count, ncclTypeName(r.dtype), spec_.hasOp ? loomOpName(r.op) : "none", r.root,
                   r.time[0] * 1e6, r.algbw[0], r.busbw[0], static_cast<long long>(r.wrong[0]), r.time[1] * 1e6,
                   r.algbw[1], r.busbw[1], static_cast<long long>(r.wrong[1]), i + 1 < rows_.size() ? "," : "");
    }
    std::fprintf(out, "]}\n");
    std::fclose(out);
  }

  const CollectiveSpec& spec_;
  const PerfOptions& options_;
  loomComm_t comm_;
  int rank_ = 0, nranks_ = 1;
  int64_t wrongTotal_ = 0, outOfBounds_ = 0;
  double busbwSum_ = 0;
  int busbwCount_ = 0;
  std::vector<Row> rows_;
};

}  // namespace

int runPerf(const CollectiveSpec& spec, const char* program, int argc, char** argv) {
  PerfOptions options = parseOptions(argc, argv, program, spec.hasOp, spec.hasRoot);
  loomConfig_t config = LOOM_CONFIG_INITIALIZER;
  if (options.timeoutSeconds > 0) config.timeoutMs = static_cast<int64_t>(options.timeoutSeconds) * 1000;
  Launch launch = launchCommunicator(&config);
  PerfRun run(spec, options, launch.comm);
  run.printHeader(program, launch.how);
  run.sweep();
  int status = run.finish();
  finishLaunch(launch);
  return status;
}

}  // namespace loom::perf

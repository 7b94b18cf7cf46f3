#include "perf_runner.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "check_data.h"
#include "perf_buffers.h"
#include "perf_launch.h"
#include "perf_options.h"
#include "perf_report.h"

namespace loom::perf {
namespace {

constexpr size_t kGuardBytes = 64;  // past every receive area: a write past the end counts as wrong
constexpr unsigned char kGuard = 0xA5;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

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
    text += range;
    cpu = last;
  }
  return text;
}

// Test-only hook (tests/integration/perf_suite_test.sh): LOOM_PERF_TEST_CORRUPT=RANK
// makes that rank spoil one received byte before each check, so the
// FAILED path and its exit status can be tested. Read by this harness only.
int corruptRank() {
  const char* text = std::getenv("LOOM_PERF_TEST_CORRUPT");
  return text != nullptr ? std::atoi(text) : -1;
}

class PerfRun {
 public:
  PerfRun(const CollectiveSpec& spec, const PerfOptions& options, loomComm_t comm, Report& report)
      : spec_(spec), o_(options), comm_(comm), report_(report), corrupt_(corruptRank()) {
    loomCommUserRank(comm, &rank_);
    loomCommCount(comm, &nranks_);
  }

  std::vector<RankInfo> gatherRanks() {
    RankInfo mine{};
    mine.pid = getpid();
    gethostname(mine.host, sizeof(mine.host) - 1);
    std::snprintf(mine.cpus, sizeof(mine.cpus), "%s", cpuList().c_str());
    std::vector<RankInfo> all(nranks_);
    must(loomAllGather(&mine, all.data(), sizeof(RankInfo), loomUint8, comm_, nullptr, nullptr), "AllGather");
    for (int r = 0; r < nranks_; ++r)
      for (int q = 0; q < r; ++q) all[r].localRank += std::strcmp(all[q].host, all[r].host) == 0;
    return all;
  }

  // The whole sweep's buffers, before the first size (and registered whole with -R).
  RunFacts allocate(const std::string& launchedBy) {
    cacheBytes_ = lastLevelCacheBytes();
    // Twice the cache: rotating over exactly its size would still find much of the region cached.
    usable_ = o_.cacheHot ? o_.maxBytes : std::max(o_.maxBytes, 2 * cacheBytes_);
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = (usable_ + 8 * static_cast<size_t>(o_.unalign) + kGuardBytes + page - 1) / page * page;
    buffers_ = std::make_unique<PerfBuffers>(bytes, o_.registerBuffers ? comm_ : nullptr, rank_);
    return {launchedBy, usable_, cacheBytes_, o_.registerBuffers != 0};
  }

  void run() {
    if (rank_ == o_.stallRank) std::this_thread::sleep_for(std::chrono::milliseconds(o_.stallMs));
    std::vector<NamedOp> ops = o_.ops;
    if (!spec_.hasOp && !spec_.printsOp) ops = {{loomSum, "none"}};
    for (loomDataType_t dtype : o_.dtypes)
      for (const NamedOp& op : ops)
        for (int root : roots()) timeTest(dtype, op, root);
  }

  std::pair<int, std::string> outcome() {
    int64_t failed = checksFailed_;
    must(loomAllReduce(&failed, &failed, 1, loomInt64, loomSum, comm_, nullptr, nullptr), "AllReduce");
    buffers_.reset();  // deregistered while every rank is still here
    return {static_cast<int>(failed), ""};
  }

  // A failing status ends the other ranks under loomrun at once: every rank
  // waits here until rank 0 has printed the footer.
  void lastBarrier() { barrier(); }

 private:
  struct Shape {
    size_t elt, bytes, sendBytes, recvBytes;
    CollCounts counts;
  };

  std::vector<int> roots() const {
    if (!spec_.hasRoot) return {-1};
    if (o_.root >= nranks_)
      fail(loomInvalidArgument, "-r " + std::to_string(o_.root) + ": only " + std::to_string(nranks_) +
                                    " ranks (roots 0 to " + std::to_string(nranks_ - 1) + ")");
    if (o_.root >= 0) return {o_.root};
    std::vector<int> all(nranks_);
    for (int r = 0; r < nranks_; ++r) all[r] = r;
    return all;
  }

  Shape shape(size_t size, loomDataType_t dtype) const {
    Shape s{};
    s.elt = loomTypeSize(dtype);
    s.counts = spec_.counts(size / s.elt, s.elt, nranks_);
    s.sendBytes = s.counts.send * s.elt;
    s.recvBytes = s.counts.recv * s.elt;
    s.bytes = std::max(s.sendBytes, s.recvBytes);
    return s;
  }

  // `sentence`: why, when the communicator's last error is not it.
  [[noreturn]] void fail(loomResult_t rc, const std::string& what, const char* sentence = nullptr) const {
    std::fprintf(stderr, "perf: rank %d: %s failed: %s: %s\n", rank_, what.c_str(), loomGetErrorString(rc),
                 sentence != nullptr ? sentence : loomCommGetLastError(comm_));
    std::fflush(stdout);
    std::fflush(stderr);
    loomCommAbort(comm_);
    std::_Exit(rc == loomTimeout ? kExitTimeout : kExitLibraryError);
  }
  // A name, not a std::string: it is built on every timed call.
  void must(loomResult_t rc, const char* what) const {
    if (rc != loomSuccess) fail(rc, what);
  }
  void barrier() { must(loomBarrier(comm_, nullptr), "Barrier"); }

  // Where iteration `iter` works: nccl-tests' rotating offset, the
  // unalignment, and the in-place layout (send or receive inside the other).
  CallArgs args(const Shape& s, loomDataType_t dtype, loomRedOp_t op, int root, bool inPlace, long iter) const {
    const size_t shift = buffers_->offset(s.bytes, usable_, iter) + o_.unalign * s.elt;
    unsigned char* in = buffers_->send() + shift;
    unsigned char* out = buffers_->recv() + shift;
    if (inPlace && !spec_.inPlaceIsOutOfPlace) {
      in = out + s.counts.sendInPlaceOffset * s.elt * rank_;
      out = out + s.counts.recvInPlaceOffset * s.elt * rank_;
    }
    return {in, out, dtype, op, root < 0 ? 0 : root, comm_, rank_, nranks_};
  }

  void start(const Shape& s, const CallArgs& a) {
    if (o_.blocking == 0) {
      requests_.resize(requests_.size() + CollectiveSpec::kMaxRequests, nullptr);
      loomRequest_t* posted = &requests_[requests_.size() - CollectiveSpec::kMaxRequests];
      must(spec_.call(a, s.counts.param, posted), spec_.name);
      boundCallsInFlight();
      return;
    }
    must(spec_.call(a, s.counts.param, nullptr), spec_.name);
    if (o_.blocking == 1) barrier();
  }

  // At most kMaxCallsInFlight posted calls wait at once, as a GPU stream
  // takes only so many launches before the host blocks: -n 1000000 would
  // otherwise queue a million calls (and their requests) up front, and
  // once the communicator failed each of them would still run through its
  // failure before the first wait said why (tens of seconds under load).
  // Runs with fewer calls per size wait for nothing here.
  static constexpr size_t kMaxCallsInFlight = 1024;
  void boundCallsInFlight() {
    const size_t perCall = CollectiveSpec::kMaxRequests;
    while (requests_.size() - waitedUpTo_ > kMaxCallsInFlight * perCall) {
      loomRequest_t& oldest = requests_[waitedUpTo_++];
      if (oldest == nullptr) continue;
      const loomResult_t rc = loomWait(oldest, -1);
      if (rc != loomSuccess) failWithFirstError(rc);
      loomRequestFree(oldest);
      oldest = nullptr;
    }
  }

  // Newest first: collectives complete in issue order, so once the last is
  // done the others are too (a SendRecv's two calls may end either way).
  void complete() {
    for (auto it = requests_.rbegin(); it != requests_.rend(); ++it) {
      if (*it == nullptr) continue;  // an unused handle (one-request calls, SendRecv on one rank)
      const loomResult_t rc = loomWait(*it, -1);
      if (rc != loomSuccess) failWithFirstError(rc);
      loomRequestFree(*it);
    }
    requests_.clear();
    waitedUpTo_ = 0;
  }

  // Calls posted after one that failed fail too, saying only that the
  // communicator failed earlier: the oldest failure is what happened (a
  // timeout naming the peer, a peer's failure), and its code decides the
  // exit status (testTimeout or testNcclError). Waiting on a finished
  // request again gives its outcome again, and none of them can hang.
  [[noreturn]] void failWithFirstError(loomResult_t rc) {
    std::string sentence = loomGetLastError();
    for (loomRequest_t request : requests_) {
      if (request == nullptr) continue;
      const loomResult_t first = loomWait(request, -1);
      if (first != loomSuccess) {
        rc = first;
        sentence = loomGetLastError();
        break;
      }
    }
    fail(rc, spec_.name, sentence.c_str());
  }

  void timeTest(loomDataType_t dtype, const NamedOp& op, int root) {
    barrier();
    const loomRedOp_t dataOp = spec_.hasOp ? op.op : loomSum;
    // As nccl-tests: warm up every size (doubling) first, out of place.
    for (size_t size = o_.minBytes; size <= o_.maxBytes; size *= 2) {
      Shape s = shape(size, dtype);
      for (int iter = 0; iter < o_.warmupIters; ++iter) start(s, args(s, dtype, dataOp, root, false, iter));
      complete();
      if (size == 0) break;
    }
    long repeat = o_.cycles;  // 0: forever, as nccl-tests
    do {
      for (size_t size = o_.minBytes; size <= o_.maxBytes;
           size = o_.stepFactor > 1 ? size * o_.stepFactor : size + o_.stepBytes) {
        Shape s = shape(size, dtype);
        HalfResult halves[2] = {benchTime(s, dtype, dataOp, root, false), benchTime(s, dtype, dataOp, root, true)};
        report_.row(s.bytes, s.counts.param, ncclTypeName(dtype), op.name, root, halves);
      }
    } while (--repeat != 0);
  }

  HalfResult benchTime(const Shape& s, loomDataType_t dtype, loomRedOp_t op, int root, bool inPlace) {
    if (o_.check) prepare(s, args(s, dtype, op, root, inPlace, 0), inPlace);
    start(s, args(s, dtype, op, root, inPlace, 0));
    complete();
    barrier();
    const long total = static_cast<long>(o_.iters) * o_.aggIters;
    double collOnly = 0;
    const Clock::time_point begin = Clock::now();
    // Only -z 3 times each call: a clock read per call would add its own
    // cost (tens of ns) to every 8 B call the other modes time as a loop.
    const bool timeEachCall = o_.blocking == 3;
    for (long iter = 0; iter < o_.iters; ++iter) {
      const Clock::time_point t0 = timeEachCall ? Clock::now() : Clock::time_point{};
      for (long a = 0; a < o_.aggIters; ++a) start(s, args(s, dtype, op, root, inPlace, iter * o_.aggIters + a));
      if (timeEachCall) {
        collOnly += since(t0);
        barrier();
      }
    }
    const double posted = (o_.blocking == 3 ? collOnly : since(begin)) / total;
    complete();
    double seconds = aggregate((o_.blocking == 3 ? collOnly : since(begin)) / total);
    HalfResult h{o_.reportCpuTime ? posted : seconds, 0, 0, 0};
    h.algBw = seconds > 0 ? s.bytes / 1e9 / seconds : 0;
    h.busBw = h.algBw * spec_.busFactor(nranks_);
    barrier();
    for (int c = 0; c < o_.check; ++c) {
      CallArgs a = args(s, dtype, op, root, inPlace, 0);
      prepare(s, a, inPlace);
      start(s, a);
      complete();
      int64_t wrong = verify(s, a, inPlace);
      if (wrong) ++checksFailed_;
      must(loomAllReduce(&wrong, &wrong, 1, loomInt64, loomSum, comm_, nullptr, nullptr), "AllReduce");
      h.wrong = wrong;
      if (wrong) break;
    }
    return h;
  }

  unsigned char* guard(const Shape& s, const CallArgs& a, bool inPlace) const {
    if (inPlace && !spec_.inPlaceIsOutOfPlace)
      return static_cast<unsigned char*>(args(s, a.dtype, a.op, -1, false, 0).recv) + s.bytes;
    return static_cast<unsigned char*>(a.recv) + s.recvBytes;
  }

  void prepare(const Shape& s, const CallArgs& a, bool inPlace) {
    std::memset(a.recv, 0, s.recvBytes);
    std::memset(guard(s, a, inPlace), kGuard, kGuardBytes);
    fillInput(const_cast<void*>(a.send), s.counts.send, a.dtype, a.op, spec_.hasOp, rank_);
  }

  int64_t verify(const Shape& s, const CallArgs& a, bool inPlace) {
    auto* out = static_cast<unsigned char*>(a.recv);
    if (rank_ == corrupt_ && s.recvBytes > 0) out[0] ^= 0x5A;
    int64_t wrong =
        countWrong(spec_, out, std::max(s.counts.send, s.counts.recv), a.dtype, a.op, a.root, rank_, nranks_);
    const unsigned char* g = guard(s, a, inPlace);
    for (size_t i = 0; i < kGuardBytes; ++i) wrong += g[i] != kGuard;
    return wrong;
  }

  // -a: rank 0's time, or the average, minimum or maximum over ranks.
  double aggregate(double seconds) {
    static const loomRedOp_t kOps[] = {loomSum, loomAvg, loomMin, loomMax};
    double value = (o_.average == 0 && rank_ != 0) ? 0.0 : seconds;
    must(loomAllReduce(&value, &value, 1, loomFloat64, kOps[o_.average], comm_, nullptr, nullptr), "AllReduce");
    return value;
  }

  const CollectiveSpec& spec_;
  const PerfOptions& o_;
  loomComm_t comm_;
  Report& report_;
  int corrupt_;
  int rank_ = 0, nranks_ = 1;
  size_t usable_ = 0, cacheBytes_ = 0;
  std::unique_ptr<PerfBuffers> buffers_;
  std::vector<loomRequest_t> requests_;
  size_t waitedUpTo_ = 0;  // requests_ before it were waited for and freed (boundCallsInFlight)
  int64_t checksFailed_ = 0;
};

}  // namespace

int runPerf(const CollectiveSpec& spec, const char* program, int argc, char** argv) {
  PerfOptions options = parseOptions(argc, argv, program, spec.hasOp, spec.hasRoot);
  loomConfig_t config = LOOM_CONFIG_INITIALIZER;
  if (options.timeoutSeconds > 0) config.timeoutMs = static_cast<int64_t>(options.timeoutSeconds) * 1000;
  Launch launch = launchCommunicator(&config);
  int rank = 0;
  loomCommUserRank(launch.comm, &rank);
  int status;
  {
    Report report(options, program, rank == 0, argc, argv);
    PerfRun run(spec, options, launch.comm, report);
    std::vector<RankInfo> ranks = run.gatherRanks();
    RunFacts facts = run.allocate(launch.how);
    report.header(ranks, facts);
    run.run();
    auto [failed, lastError] = run.outcome();
    status = report.footer(failed, lastError);
    run.lastBarrier();
  }
  finishLaunch(launch);
  return status;
}

}  // namespace loom::perf

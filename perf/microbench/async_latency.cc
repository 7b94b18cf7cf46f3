// What the async path costs: an 8-byte AllReduce called blocking, against
// the same call posted with a request and waited at once, and posted then
// polled with loomTest. Rounds of each kind alternate, so machine noise hits
// all kinds alike; rank 0 prints the median round of each and the ratio to
// blocking. Run under loomrun (docs/PERF.md quotes it):
//
//   loomrun -n 2 build/perf/async_latency
#include <loom/loom.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kRounds = 40, kCallsPerRound = 2000;

enum Kind { kBlocking, kPostedThenWaited, kPostedThenTested, kKinds };
const char* const kNames[kKinds] = {"blocking", "posted, then loomWait", "posted, then loomTest until done"};

void must(loomResult_t rc, const char* what) {
  if (rc == loomSuccess) return;
  std::fprintf(stderr, "async_latency: %s: %s: %s\n", what, loomGetErrorString(rc), loomGetLastError());
  std::exit(1);
}

void call(loomComm_t comm, Kind kind, const double* in, double* out) {
  if (kind == kBlocking) {
    must(loomAllReduce(in, out, 1, loomFloat64, loomSum, comm, nullptr, nullptr), "AllReduce");
    return;
  }
  loomRequest_t request = nullptr;
  must(loomAllReduce(in, out, 1, loomFloat64, loomSum, comm, nullptr, &request), "AllReduce");
  if (kind == kPostedThenWaited) {
    must(loomWait(request, -1), "loomWait");
  } else {
    int done = 0;
    while (!done) must(loomTest(request, &done), "loomTest");
  }
  loomRequestFree(request);
}

double roundMicros(loomComm_t comm, Kind kind) {
  double in = 1, out = 0;
  must(loomBarrier(comm, nullptr), "Barrier");
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kCallsPerRound; ++i) call(comm, kind, &in, &out);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kCallsPerRound;
}

}  // namespace

int main() {
  loomComm_t comm;
  must(loomCommInitFromEnv(&comm, nullptr), "init");
  int rank = 0, nranks = 0;
  loomCommUserRank(comm, &rank);
  loomCommCount(comm, &nranks);
  for (int kind = 0; kind < kKinds; ++kind) roundMicros(comm, static_cast<Kind>(kind));  // warm up
  std::vector<std::vector<double>> times(kKinds);
  for (int round = 0; round < kRounds; ++round)
    for (int kind = 0; kind < kKinds; ++kind) times[kind].push_back(roundMicros(comm, static_cast<Kind>(kind)));
  if (rank == 0) {
    std::printf("# 8-byte AllReduce on %d ranks: median of %d rounds of %d calls, us per call\n", nranks, kRounds,
                kCallsPerRound);
    double blocking = 0;
    for (int kind = 0; kind < kKinds; ++kind) {
      std::vector<double>& t = times[kind];
      std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
      const double median = t[t.size() / 2];
      if (kind == kBlocking) blocking = median;
      std::printf("%-34s %8.3f us  %5.2fx blocking\n", kNames[kind], median, median / blocking);
    }
  }
  must(loomCommDestroy(comm), "destroy");
  return 0;
}

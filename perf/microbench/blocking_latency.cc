// What a loop of blocking calls costs, as a training step's small
// AllReduces are issued: 8 bytes, back to back, nothing else in flight, for
// long enough that every background thread settles into what it does in
// such a loop (async_latency alternates kinds of call every round instead).
// Rank 0 prints the median and the fastest of the rounds:
//
//   loomrun -n 2 build/perf/blocking_latency [rounds] [calls per round]
#include <loom/loom.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

void must(loomResult_t rc, const char* what) {
  if (rc == loomSuccess) return;
  std::fprintf(stderr, "blocking_latency: %s: %s: %s\n", what, loomGetErrorString(rc), loomGetLastError());
  std::exit(1);
}

int positiveArgument(int argc, char** argv, int index, int fallback) {
  if (argc <= index) return fallback;
  const int value = std::atoi(argv[index]);
  if (value <= 0) {
    std::fprintf(stderr, "blocking_latency: argument %d (%s) must be a positive number\n", index, argv[index]);
    std::exit(2);
  }
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = positiveArgument(argc, argv, 1, 10);
  const int calls = positiveArgument(argc, argv, 2, 100000);
  loomComm_t comm;
  must(loomCommInitFromEnv(&comm, nullptr), "init");
  int rank = 0, nranks = 0;
  must(loomCommUserRank(comm, &rank), "rank");
  must(loomCommCount(comm, &nranks), "count");
  double in = 1, out = 0;
  std::vector<double> nanoseconds;
  for (int round = -1; round < rounds; ++round) {  // round -1 warms up
    must(loomBarrier(comm, nullptr), "Barrier");
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i)
      must(loomAllReduce(&in, &out, 1, loomFloat64, loomSum, comm, nullptr, nullptr), "AllReduce");
    const std::chrono::duration<double, std::nano> took = std::chrono::steady_clock::now() - start;
    if (round >= 0) nanoseconds.push_back(took.count() / calls);
  }
  if (rank == 0) {
    std::sort(nanoseconds.begin(), nanoseconds.end());
    std::printf("# blocking 8-byte AllReduce on %d ranks, %d rounds of %d calls: ns per call\n", nranks, rounds, calls);
    std::printf("median %.1f  fastest %.1f\n", nanoseconds[nanoseconds.size() / 2], nanoseconds.front());
  }
  must(loomCommDestroy(comm), "destroy");
  return 0;
}

// Latency of one small Broadcast or Reduce on its own, not back to back:
// each call is followed by a Barrier, so a call cannot overlap the next one
// in the FIFOs the way the perf suite's loop lets it (there, chain and tree
// show the same per-call time). Run under loomrun; rank 0 prints the mean
// time of call + Barrier and of Barrier + Barrier, whose difference is the
// call's latency.
//
//   loomrun -n 8 build/perf/isolated_latency            # Loom's choice (the cost model's)
//   LOOM_TREE_MAX_BYTES=0 loomrun -n 8 build/perf/isolated_latency   # chains
#include <loom/loom.h>

#include <chrono>
#include <cstdio>

namespace {

constexpr int kWarmup = 500, kCalls = 5000;

double microsecondsPerRound(loomComm_t comm, int kind) {
  float in[2] = {1, 2}, out[2];
  auto start = std::chrono::steady_clock::now();
  for (int i = -kWarmup; i < kCalls; ++i) {
    if (i == 0) {
      loomBarrier(comm, nullptr);
      start = std::chrono::steady_clock::now();
    }
    if (kind == 0) loomBroadcast(in, out, 2, loomFloat32, 0, comm, nullptr, nullptr);
    if (kind == 1) loomReduce(in, out, 2, loomFloat32, loomSum, 0, comm, nullptr, nullptr);
    loomBarrier(comm, nullptr);
  }
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / kCalls;
}

}  // namespace

int main() {
  loomComm_t comm;
  if (loomCommInitFromEnv(&comm, nullptr) != loomSuccess) {
    std::fprintf(stderr, "isolated_latency: %s\n", loomGetLastError());
    return 1;
  }
  int rank = 0, nranks = 0;
  loomCommUserRank(comm, &rank);
  loomCommCount(comm, &nranks);
  const char* names[] = {"Broadcast 8 B + Barrier", "Reduce 8 B + Barrier", "Barrier + Barrier"};
  for (int kind = 0; kind < 3; ++kind) {
    double us = microsecondsPerRound(comm, kind);
    if (rank == 0) std::printf("%d ranks: %-24s %8.2f us\n", nranks, names[kind], us);
  }
  loomCommDestroy(comm);
  return 0;
}

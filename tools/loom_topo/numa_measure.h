// Micro-measurements with pinned threads, used by --check.
#pragma once

#include <cstddef>
#include <set>
#include <vector>

namespace loom::topo::detail {

// The CPUs this process (and every thread or process it starts) may run on.
std::set<int> allowedCpus();

// Memory on the NUMA node of `memCpu` (first touch), read from `readerCpu`.
struct MemoryResult {
  double bandwidthGBs = 0;
  double latencyNs = 0;  // dependent loads, random order
};
MemoryResult measureMemory(int readerCpu, int memCpu, size_t bytes);

// One-way latency of a cache line bounced between two cores, in ns.
double measurePingPong(int cpuA, int cpuB, int rounds);

// Bytes per microsecond that threads, one pinned to each of `cpus`, copy
// together, each between two buffers of `bytes` of its own (the best of 3
// rounds, all threads copying at once). The buffers copied from are first
// touched on `sourceCpu` where it is not -1 (its NUMA node's memory), the
// others on each thread's own CPU.
double measureCopyBytesPerUs(const std::vector<int>& cpus, size_t bytes, int sourceCpu = -1);

}  // namespace loom::topo::detail

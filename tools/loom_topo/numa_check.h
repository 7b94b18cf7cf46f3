// loom-topo --check: measure what the topology claims. Threads pinned to
// cores of each NUMA node time memory reads (bandwidth), pointer chases
// (memory latency) and cache-line ping-pong between cores, and every pair
// whose measurement disagrees with its detected class by more than 30% is
// flagged with the LOOM_TOPO_FILE edit that would fix it.
#pragma once

#include <ostream>

#include "topology/topology.h"

namespace loom::topo {

struct CheckOptions {
  size_t bufferBytes = 64u << 20;  // per NUMA node; larger than most L3 caches
  int pingPongRounds = 20000;
  int maxCoresPerNode = 8;         // core-to-core pairs measured inside a node
};

// Prints the measurements and findings; returns the number of findings.
int runNumaCheck(const Topology& t, std::ostream& os, const CheckOptions& options = {});

}  // namespace loom::topo

// Where each rank runs, and the ring order that follows from it. This is
// what the communicator calls at init: load the topology, tell the others
// this rank's placement, order the ring.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace loom::topo {

class PathFinder;  // topology/paths.h

// What one rank tells the others at init (fixed-size, trivially copyable so it can be exchanged as bytes).
struct RankPlacement {
  char host[64];         // hostname, NUL-terminated
  int32_t package;       // socket of the rank's CPU binding; -1 when it spans several
  int32_t numa;          // NUMA node (OS index) of the binding; -1 when it spans several
  int32_t firstCpu;      // lowest CPU of the binding
  int32_t cpuCount;      // CPUs in the binding
  uint64_t cpuMask[16];  // the binding, CPUs 0..1023
  char nic[32];          // the NIC nearest the rank's NUMA node ("mlx5_0"); "" if none
};

// This process's placement from its current CPU binding on `topology` (host = hostname).
RankPlacement ownPlacement(const class Topology& topology);

// Ring order over all ranks (a permutation of 0..n-1, starting with rank 0) crossing host, then package, then NUMA
// boundaries as few times as possible, keeping rank order inside a group.
std::vector<int> ringOrder(const std::vector<RankPlacement>& ranks);

// Load the machine's topology: from `topoFile` if non-empty (NCCL XML or hwloc XML, detected by content) else by hwloc
// detection; if `dumpFile` non-empty write the result there as NCCL XML. Throws loom::Error with file:line on bad
// files.
std::unique_ptr<Topology> loadTopology(const std::string& topoFile, const std::string& dumpFile);

// --- helpers for the communicator and loom-topo ---

// What lies between two ranks: LOC (same NUMA node), PHB (same socket,
// other NUMA node), SYS (other socket), NET (other host).
enum class Locality { kSameNuma, kSameSocket, kSameHost, kOtherHost };
Locality locality(const RankPlacement& a, const RankPlacement& b);
const char* localityName(Locality l);

// Boundaries a ring crosses (closing hop included), per kind.
struct RingCrossings {
  int hosts = 0, packages = 0, numas = 0;
};
RingCrossings countCrossings(const std::vector<RankPlacement>& ranks, const std::vector<int>& ring);

// What the cost model counts of the hosts' crowding: the most ranks per
// CPU on a host (a host's ranks whose bindings are known over the CPUs
// those bindings cover together: hardware threads), the most sockets one
// host's ranks are bound to (ranks bound across several count for none),
// 1 each where nothing is known; and the fewest CPUs a host's bindings
// cover, 0 where none is known.
struct HostCrowding {
  double ranksPerCpu = 1;
  int sockets = 1;
  int fewestCpus = 0;
};
HostCrowding mostCrowdedHost(const std::vector<RankPlacement>& ranks);

// Placement of a rank bound to one CPU of `topology`; for many ranks, pass
// one PathFinder on `topology` (its nearest-NIC search is the cost).
RankPlacement placementOfCpu(const Topology& topology, int cpu, const std::string& host);
RankPlacement placementOfCpu(const Topology& topology, const PathFinder& paths, int cpu, const std::string& host);

// mpirun's --map-by core|socket|numa for n ranks on `topology`: rank i goes
// to the next free core of the next socket (or NUMA node) round-robin.
// Throws loom::Error(loomInvalidArgument) for an unknown policy.
std::vector<RankPlacement> simulatePlacements(const Topology& topology, int n, const std::string& mapBy);

}  // namespace loom::topo

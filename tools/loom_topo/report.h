// What loom-topo prints: the versions, the tree, the path matrix, the rings
// for a simulated launch, and JSON / Graphviz renderings of the graph.
#pragma once

#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/algorithm_table.h"
#include "loom_topo/versions.h"
#include "topology/placement.h"
#include "topology/topology.h"
#include "transport/identity.h"
#include "transport/registry.h"

namespace loom::topo {

void printVersions(std::ostream& os, const Versions& v);
void printTree(std::ostream& os, const Topology& t);
// Like `nvidia-smi topo -m`: GPUs, NICs and NUMA nodes against each other,
// then the CPUs, NUMA node and nearest NIC of each GPU.
void printMatrix(std::ostream& os, const Topology& t);
// The ring Loom builds for ranksPerHost[k] ranks on each host k, every host
// like `t`, ranks placed on each like mpirun --map-by, hosts in rank order.
void printRings(std::ostream& os, const Topology& t, const std::vector<int>& ranksPerHost, const std::string& mapBy);
// Which transport connects each pair of ranks of that layout, as a
// communicator would choose with LOOM_TRANSPORTS=`transports` ("" for unset).
void printTransports(std::ostream& os, const std::vector<int>& ranksPerHost, const std::string& transports);
// The identities of that layout's ranks, as a communicator's ranks would
// present them: host k's named "host<k>", distinct pids.
std::vector<RankIdentity> simulatedIdentities(const std::vector<int>& ranksPerHost);
// Which algorithm each collective takes on that layout, at 8 B, 64 KiB,
// 1 MiB and 64 MiB and wherever the choice changes, with the cost model's
// estimates; LOOM_ALGO and the size limits as a communicator reads them.
// Every host is like `t`, its ranks placed on its CPUs like mpirun
// --map-by `mapBy`: where they outnumber the CPUs, they share them.
void printPlan(std::ostream& os, const Topology& t, const std::vector<int>& ranksPerHost, const std::string& mapBy,
               const std::string& transports);
// The slots the schedules of that layout cut messages by: the smallest
// count and size among the kinds that connect its pairs, as
// Connections::slotBytesAmong.
SlotShape layoutSlots(const std::vector<int>& ranksPerHost, const std::string& transports);

// What --simulate runs: the collectives' every algorithm, on the first 2, 4,
// 8, ... ranks of the layout and on all of them, at each size.
struct SimulationRequest {
  std::vector<int> ranksPerHost;
  std::string transports;  // LOOM_TRANSPORTS, for the slots
  std::vector<TunedCollective> collectives;
  std::vector<size_t> sizes;
  std::string plotTo;  // a PNG to draw, or empty
};
void printSimulation(std::ostream& os, const SimulationRequest& request);

std::string topologyJson(const Topology& t);
std::string topologyDot(const Topology& t);

// Helpers shared by the renderers. cat() streams its parts: `"x" + string`
// trips GCC 12's false -Wrestrict (PR 105329) at -O3.
template <typename... Parts>
std::string cat(const Parts&... parts) {
  std::ostringstream os;
  (os << ... << parts);
  return os.str();
}
std::string cpuListString(const std::vector<int>& cpus);  // "0-23,48-71"
std::string bytesString(uint64_t bytes);                  // "755.0 GiB"
std::string gbsString(double gbs);                        // "24 GB/s"
std::string padded(const std::string& s, size_t width);   // s and spaces to width, at least one
std::vector<int> matrixNodes(const Topology& t);          // GPUs, NICs, then NUMA nodes
// The placements of that layout: host k's ranks named "host<k>" when there
// are several hosts, else the machine's name.
std::vector<RankPlacement> simulateHosts(const Topology& t, const std::vector<int>& ranksPerHost,
                                         const std::string& mapBy);

}  // namespace loom::topo

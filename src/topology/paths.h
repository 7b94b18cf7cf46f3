// Path classes between two points of the graph, in the vocabulary NCCL and
// `nvidia-smi topo -m` users already know, ordered from best to worst.
#pragma once

#include <string>

#include "topology/topology.h"

namespace loom::topo {

enum class PathClass {
  kLoc,  // the same device, or a NUMA node and itself
  kNvl,  // NVLink, directly or through the NVSwitch fabric
  kNvb,  // NVLink through one intermediate GPU
  kPix,  // at most one PCIe switch
  kPxb,  // several PCIe switches, not the host bridge
  kPhb,  // through the host bridge of one CPU (NUMA node)
  kSys,  // across the interconnect between NUMA nodes or sockets
  kNet,  // another host, through the network
};

const char* pathClassName(PathClass c);
bool parsePathClass(const std::string& name, PathClass* out);

struct Path {
  PathClass cls = PathClass::kSys;
  double bandwidthGBs = 0;  // of the slowest link crossed
  double latencyUs = 0;     // summed over the links crossed
};

// Any two nodes of one topology (CPU nodes included: LOC or SYS between
// NUMA nodes, PHB or SYS between a NUMA node and a device).
Path path(const Topology& t, int a, int b);

// The NIC with the best path from `device` (class first, then bandwidth);
// -1 when the machine has none. RDMA NICs win over plain Ethernet ties.
int nearestNic(const Topology& t, int device);

// Usable figures Loom assumes where the source gives none (NCCL's numbers).
double nvlinkGBsPerLane(int sm);
double interCpuGBs(const Node& cpu);
constexpr double kPciLatencyUs = 0.5;   // per PCIe hop
constexpr double kNvlLatencyUs = 0.3;   // per NVLink hop
constexpr double kSysLatencyUs = 0.25;  // crossing the socket interconnect once
constexpr double kLocalGBs = 5000;      // NCCL's LOC_BW: inside one device
constexpr double kMloPartGBs = 2618;    // NCCL's link between the two partitions of one GPU

}  // namespace loom::topo

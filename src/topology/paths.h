// Path classes between two points of the graph, in the vocabulary NCCL and
// `nvidia-smi topo -m` users already know, ordered from best to worst.
#pragma once

#include <string>
#include <vector>

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

// Paths between many pairs of one topology (path_finder.cc). Construction
// indexes the graph once, in O(nodes + links): each node's PCI uplink and
// depth, the NVLink between any two nodes, each GPU's NVLink peers and its
// bandwidth into the NVSwitch fabric. A pair then costs O(PCI depth +
// NVLink peers) instead of scans of every link and GPU, which made the
// reports of a 400-GPU file take a minute (docs/RELIABILITY.md, "Topology
// input"). The topology must not change while a PathFinder on it is used.
class PathFinder {
 public:
  explicit PathFinder(const Topology& t);

  // Any two nodes (CPU nodes included: LOC or SYS between NUMA nodes, PHB or
  // SYS between a NUMA node and a device).
  Path path(int a, int b) const;

  // The NIC with the best path from `device` (class first, then bandwidth);
  // -1 when the machine has none. RDMA NICs win over plain Ethernet ties.
  int nearestNic(int device) const;

 private:
  const Link* nvlinkBetween(int a, int b) const;
  bool nvlinkPath(int a, int b, Path* p) const;
  Path treePath(int a, int b) const;
  void crossUp(int from, int hops, Path* p) const;

  const Topology& t_;
  std::vector<int> nics_;
  std::vector<const Link*> uplink_;           // PCI link to the parent, per node
  std::vector<int> depth_;                    // hops to the root of its tree
  std::vector<int> root_;                     // that root (a CPU node, or the node itself)
  std::vector<double> sysGBs_;                // a root's socket interconnect; kLocalGBs if not a CPU
  std::vector<double> fabricGBs_;             // NVLink into the NVSwitch fabric, per node
  std::vector<std::vector<int>> nvlinkGpus_;  // NVLink peers that are GPUs, per node
  std::vector<int> gpuOrder_;                 // position in t.gpus(), per node; -1 not a GPU
  struct Peer {
    int node;
    const Link* link;  // the first NVLink between the two, in file order
  };
  std::vector<std::vector<Peer>> nvlinks_;  // NVLink peers by node id, per node
};

// One pair, or one device's nearest NIC: each indexes the topology anew
// (O(nodes + links)); for many, make one PathFinder.
Path path(const Topology& t, int a, int b);
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

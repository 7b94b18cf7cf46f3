// The machine as one graph: CPU (NUMA) nodes at the roots of PCI trees of
// switches, GPUs, NICs and NVSwitches, joined by links that carry a
// bandwidth and a latency. Every source (hwloc detection, hwloc XML, NCCL
// XML) produces this same model, so paths, rings, dumps and loom-topo never
// care where the machine came from.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace loom::topo {

enum class NodeKind { kCpu, kPciSwitch, kGpu, kNic, kNvSwitch, kPciDevice };
enum class LinkKind { kPci, kNvLink, kSys };

const char* nodeKindName(NodeKind kind);

// Attributes kept verbatim so that a dump carries what a file said even when
// Loom does not interpret it (a NIC's guid, a GPU's latency, ...).
using Attributes = std::vector<std::pair<std::string, std::string>>;

struct PciInfo {
  std::string busId;      // "0000:17:00.0"; empty for a NIC or NVSwitch outside the PCI tree
  int32_t classCode = -1;  // 24 bits as NCCL writes it: 0x030200; -1 unknown
  int32_t vendor = -1, device = -1, subVendor = -1, subDevice = -1;
  std::string linkSpeed;  // as NCCL writes it: "16 GT/s"; empty unknown
  int linkWidth = 0;      // lanes; 0 unknown
};

// An element a file holds that Loom does not model (<pcilink>, <c2c>, an
// <nvlink> whose peer the file hides), kept so that a dump writes it back.
struct RawElement {
  std::string name;
  Attributes attrs;
};

// One port of a NIC as NCCL's <net> describes it.
struct NetPort {
  std::string name;      // "mlx5_0", "eth0"
  int64_t speedMbps = -1;
  int port = -1;
  int gdr = -1;
  Attributes extra;      // dev, guid, maxconn, latency, ... as read
};

struct Node {
  int id = -1;
  NodeKind kind = NodeKind::kPciDevice;
  std::string name;      // "NUMA0", "GPU3", "mlx5_0", "NVS0", "SW 0000:0c:00.0"
  int parent = -1;       // in the PCI tree: a CPU node or a switch; -1 for roots
  std::vector<int> children;
  int index = -1;        // position among nodes of its kind: GPU3 has index 3
  int line = 0;          // where a file defined it, for messages; 0 detected
  PciInfo pci;
  Attributes extra;      // uninterpreted attributes of its element (<cpu> or <pci>)
  std::vector<RawElement> rawChildren;  // unmodelled children of its <pci> (<pcilink>)

  // kCpu: one NUMA node.
  int numa = -1;         // OS index (NCCL's numaid)
  int package = -1;      // socket; NCCL files lack it, so Loom adds package="N"
  std::vector<int> cpus; // OS indexes of its PUs
  uint64_t memoryBytes = 0;
  std::string arch, vendor;
  int familyId = -1, modelId = -1;

  // kGpu
  int gpuDev = -1, sm = -1, gpuRank = -1, gpuGdr = -1;
  std::string model;     // "Tesla V100-SXM3-32GB-H" when known
  Attributes gpuExtra;   // uninterpreted attributes of <gpu>
  std::vector<RawElement> gpuRawChildren;  // <c2c>; <nvlink> to itself or to a GPU the file lacks
  // NCCL's <gpu mlopart>: R200/GB300-style GPUs split into two partitions
  // (uGPUs) that share one PCI function, each its own GPU with half the
  // NVLink bandwidth. Which half (0 or 1); -1 a whole GPU.
  int mloPart = -1;
  // The second partition's node: the node of the <pci> (the first
  // partition) whose bus id and PCI link it shares; -1 otherwise. Such a node
  // hangs off the same parent but is written inside its first partition's <pci>.
  int partitionOf = -1;

  // kNic
  std::vector<NetPort> nets;
  // <net net="0">: a device NCCL's network transport does not use (only GIN,
  // RMA or CollNet do, or NIC fusion folded it into a virtual NIC). Not a
  // port: kept for the dump only.
  std::vector<NetPort> nonNetPorts;
  bool rdma = false;     // an OpenFabrics device (mlx5_0) or an NCCL <net>

  // kNvSwitch seen only as an NVLink target, never as a PCI device.
  bool implicit = false;
};

struct Link {
  int a = -1, b = -1;
  LinkKind kind = LinkKind::kPci;
  double bandwidthGBs = 0;  // usable, one direction
  double latencyUs = 0;
  int count = 1;            // NVLink lanes bundled in this link
};

// One logical CPU (hwloc PU) and where it sits.
struct Pu {
  int os = -1;
  int core = -1;     // OS index of its core; equals os when the source has no cores
  int package = -1;
  int numa = -1;
};

struct CacheLevel {
  int level = 0;     // 1, 2, 3
  std::string type;  // "d", "i", "" (unified)
  uint64_t bytes = 0;
  int count = 0;
};

class Topology {
 public:
  std::string source;     // "hwloc detection", "NCCL XML file x.xml", ...
  std::string hostname;
  std::string hwlocVersion;  // of the library that read it (detection or hwloc XML)
  std::vector<Node> nodes;
  std::vector<Link> links;
  std::vector<Pu> pus;
  std::vector<CacheLevel> caches;
  // Relative NUMA latencies (10 = local) when the source has them; indexed by
  // position in cpuNodes().
  std::vector<std::vector<uint64_t>> numaDistances;
  // What a file reader accepted but a person should know ("file.xml:12: ..."),
  // each also logged once at WARN.
  std::vector<std::string> warnings;

  int addNode(Node node);  // returns its id; sets parent's child list
  void addLink(int a, int b, LinkKind kind, double bandwidthGBs, double latencyUs, int count = 1);

  std::vector<int> ofKind(NodeKind kind) const;  // ids ordered by Node::index
  std::vector<int> cpuNodes() const { return ofKind(NodeKind::kCpu); }
  std::vector<int> gpus() const { return ofKind(NodeKind::kGpu); }
  std::vector<int> nics() const { return ofKind(NodeKind::kNic); }
  std::vector<int> nvSwitches() const { return ofKind(NodeKind::kNvSwitch); }
  int findBusId(const std::string& busId) const;  // -1 if absent
  // The GPU nodes of one PCI function: one, or two MLOPart partitions.
  std::vector<int> gpusAtBusId(const std::string& busId) const;
  int findByName(const std::string& name) const;  // -1 if absent
  int cpuNodeOfNuma(int numa) const;              // -1 if absent
  int rootCpu(int node) const;                    // the CPU node above a device; -1 if none
  const Pu* findPu(int os) const;
  int packageCount() const;
  std::vector<const Link*> linksOf(int node) const;

  // Package and NUMA order, names and the PU table follow from the CPU
  // nodes; sources call this once they have added everything.
  void finish();
};

}  // namespace loom::topo

// NCCL's fill-in rule for topology files: what the file says wins, what it
// leaves out comes from the machine Loom detected. Cloud vendors' files list
// only bus ids and NUMA nodes; the driver supplies the rest.
#include <set>
#include <vector>

#include "base/logging.h"
#include "topology/nccl_xml.h"
#include "topology/nccl_xml_internal.h"
#include "topology/paths.h"

namespace loom::topo {

namespace {

template <typename T>
void fillIfUnset(T& mine, const T& theirs, const T& unset) {
  if (mine == unset) mine = theirs;
}

// A <cpu> without affinity takes its NUMA node's CPUs from the machine, but
// only those no other <cpu> of the file lists: one CPU in two NUMA nodes is
// what the reader refuses, so the dump (LOOM_TOPO_DUMP_FILE) would not load.
void fillCpus(Node& cpu, const Node& seen, std::set<int>& claimed) {
  if (!cpu.cpus.empty()) return;
  std::vector<int> left;
  for (int c : seen.cpus) {
    if (claimed.insert(c).second) {
      cpu.cpus.push_back(c);
    } else {
      left.push_back(c);
    }
  }
  if (!left.empty()) {
    LOOM_INFO("INIT", -1,
              "topology file: line " << cpu.line << ": <cpu numaid=\"" << cpu.numa << "\"> has no affinity; "
                                     << left.size() << " of the detected NUMA node's CPUs are left out "
                                     << "because another <cpu> of the file lists them");
  }
}

void fillCpu(Node& cpu, const Node& seen) {
  fillIfUnset(cpu.package, seen.package, -1);
  fillIfUnset(cpu.memoryBytes, seen.memoryBytes, uint64_t{0});
  fillIfUnset(cpu.arch, seen.arch, std::string());
  fillIfUnset(cpu.vendor, seen.vendor, std::string());
  fillIfUnset(cpu.familyId, seen.familyId, -1);
  fillIfUnset(cpu.modelId, seen.modelId, -1);
}

void fillPci(Node& dev, const Node& seen) {
  // A plain PCI device of the file (a bare <pci busid>, or a NIC the file
  // gives no port NCCL uses) becomes whatever the machine has at that
  // address, if its class, when it has one, fits. Anything else the file
  // already made into something (by its class, or by its children: a
  // switch, a GPU, a NIC); where the machine has another kind of device
  // there, its class and ids would contradict the file (a NIC holding PCI
  // devices, which no dump reads back), so that device takes nothing.
  const bool takesMachineKind = dev.kind == NodeKind::kPciDevice &&
                                (dev.pci.classCode < 0 || pciClassKind(dev.pci.classCode, dev.pci.vendor) == seen.kind);
  if (!takesMachineKind && dev.kind != seen.kind) {
    LOOM_WARN("INIT", -1,
              "topology file: line " << dev.line << ": <pci> " << dev.pci.busId << " is a " << nodeKindName(dev.kind)
                                     << " in the file but a " << nodeKindName(seen.kind)
                                     << " on this machine; nothing is filled in from the machine's device");
    return;
  }
  PciInfo& p = dev.pci;
  fillIfUnset(p.classCode, seen.pci.classCode, -1);
  fillIfUnset(p.vendor, seen.pci.vendor, -1);
  fillIfUnset(p.device, seen.pci.device, -1);
  fillIfUnset(p.subVendor, seen.pci.subVendor, -1);
  fillIfUnset(p.subDevice, seen.pci.subDevice, -1);
  fillIfUnset(p.linkSpeed, seen.pci.linkSpeed, std::string());
  fillIfUnset(p.linkWidth, seen.pci.linkWidth, 0);
  dev.kind = seen.kind;
  fillIfUnset(dev.model, seen.model, std::string());
  if (dev.nets.empty()) dev.nets = seen.nets;
  dev.rdma = dev.rdma || seen.rdma;
}

// GPUs and RDMA NICs the file does not list hang off the CPU node of their
// NUMA node, as NCCL adds the devices it uses to a loaded file.
void addMissingDevice(Topology& file, const Topology& detected, const Node& seen) {
  int root = detected.rootCpu(seen.id);
  int cpu = root >= 0 ? file.cpuNodeOfNuma(detected.nodes[root].numa) : -1;
  if (cpu < 0) cpu = file.cpuNodes().front();
  Node dev = seen;
  dev.children.clear();
  dev.parent = cpu;
  dev.index = -1;
  dev.name.clear();
  int id = file.addNode(std::move(dev));
  file.addLink(id, cpu, LinkKind::kPci, 24.0, kPciLatencyUs);
  LOOM_INFO("INIT", -1, "topology file: added detected " << nodeKindName(seen.kind) << " " << seen.pci.busId);
}

}  // namespace

void fillFromDetected(Topology& file, const Topology& detected) {
  if (file.hostname.empty()) file.hostname = detected.hostname;
  if (file.caches.empty()) file.caches = detected.caches;
  file.hwlocVersion = detected.hwlocVersion;
  std::set<int> claimed;  // CPUs some <cpu> of the file has
  for (const Node& n : file.nodes) {
    if (n.kind == NodeKind::kCpu) claimed.insert(n.cpus.begin(), n.cpus.end());
  }
  for (Node& n : file.nodes) {
    if (n.kind == NodeKind::kCpu) {
      int seen = detected.cpuNodeOfNuma(n.numa);
      if (seen >= 0) {
        fillCpus(n, detected.nodes[seen], claimed);
        fillCpu(n, detected.nodes[seen]);
      }
      continue;
    }
    int seen = detected.findBusId(n.pci.busId);
    if (seen >= 0) fillPci(n, detected.nodes[seen]);
  }
  for (const Node& seen : detected.nodes) {
    bool wanted = seen.kind == NodeKind::kGpu || (seen.kind == NodeKind::kNic && seen.rdma);
    if (wanted && file.findBusId(seen.pci.busId) < 0) addMissingDevice(file, detected, seen);
  }
}

}  // namespace loom::topo

// The machine as an indented tree: packages, NUMA nodes with their CPUs and
// memory, and below each NUMA node the PCI switches, GPUs and NICs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <utility>

#include "loom_topo/report.h"
#include "topology/nccl_xml.h"
#include "topology/paths.h"
#include "topology/pci.h"

namespace loom::topo {

namespace {

std::string pciLink(const Node& n) {
  std::string s;
  if (!n.pci.linkSpeed.empty() && gigaTransfers(n.pci.linkSpeed) <= 0) {
    s += cat("PCIe speed \"", n.pci.linkSpeed, "\"");  // sysfs's "Unknown": as the file says
  } else if (!n.pci.linkSpeed.empty()) {
    s += cat("PCIe ", n.pci.linkSpeed);
  }
  if (n.pci.linkWidth > 0) s += cat(" x", n.pci.linkWidth);
  double bw = pciUsableGBs(n.pci.linkSpeed, n.pci.linkWidth);
  if (bw > 0) s += cat(" (", gbsString(bw), ")");
  return s.empty() ? "link unknown" : s;
}

// Lanes are summed in 64 bits: a file may give each link up to INT_MAX.
std::string nvlinkSummary(const Topology& t, const Node& n) {
  int64_t lanes = 0;
  int peers = 0;
  double bw = 0;
  for (const Link* l : t.linksOf(n.id)) {
    if (l->kind != LinkKind::kNvLink) continue;
    lanes += l->count;
    peers++;
    bw += l->bandwidthGBs;
  }
  // <nvlink> kept without a link: a VM named the GPU itself, or a GPU the file lacks.
  int64_t unnamed = 0;
  for (const RawElement& e : n.gpuRawChildren) {
    if (e.name != "nvlink") continue;
    int64_t count = 1;  // as the reader counts it: absent, empty or below 1 is one lane
    for (const auto& [k, v] : e.attrs) {
      if (k == "count") count = std::max<int64_t>(1, parseNcclNumber(v).value_or(1));
    }
    unnamed += count;
  }
  std::string s;
  if (peers > 0) s = cat(", NVLink ", lanes, " lanes to ", peers, " peers (", gbsString(bw), ")");
  if (unnamed > 0) s += cat(", NVLink ", unnamed, " lanes to peers the file does not name");
  return s;
}

std::string describe(const Topology& t, const Node& n) {
  std::string s = n.kind == NodeKind::kPciSwitch ? cat("PCI switch ", n.pci.busId) : cat(nodeKindName(n.kind), " ", n.name);
  if (n.kind != NodeKind::kPciSwitch && !n.pci.busId.empty()) s += cat(" [", n.pci.busId, "]");
  if (n.kind == NodeKind::kGpu && n.mloPart >= 0) s += cat(" partition ", n.mloPart, " of 2");  // MLOPart halves share a bus id
  if (!n.model.empty()) s += cat(" ", n.model);
  if (n.kind == NodeKind::kNic) {
    std::string ports;
    for (const NetPort& p : n.nets) {
      if (p.name != n.name) ports += cat(ports.empty() ? "" : ",", p.name);
    }
    if (!ports.empty()) s += cat(" (", ports, ")");
    if (n.rdma) s += " RDMA";
  }
  if (!n.pci.busId.empty() && !n.implicit) s += cat(", ", pciLink(n));
  return s + nvlinkSummary(t, n);
}

void printDevice(std::ostream& os, const Topology& t, int id, int depth) {
  const Node& n = t.nodes[id];
  if (n.kind == NodeKind::kPciDevice && n.children.empty()) {
    os << std::string(2 * depth, ' ') << "PCI device " << n.pci.busId << "\n";
    return;
  }
  os << std::string(2 * depth, ' ') << describe(t, n) << "\n";
  for (int c : n.children) printDevice(os, t, c, depth + 1);
}

}  // namespace

std::string cpuListString(const std::vector<int>& cpus) {
  std::vector<int> sorted(cpus);
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) j++;
    if (!out.empty()) out += ",";
    out += std::to_string(sorted[i]);
    if (j > i) out += cat("-", sorted[j]);
    i = j + 1;
  }
  return out.empty() ? "unknown" : out;
}

std::string bytesString(uint64_t bytes) {
  char buf[32];
  double gib = bytes / (1024.0 * 1024 * 1024), mib = bytes / (1024.0 * 1024);
  if (gib >= 1) {
    std::snprintf(buf, sizeof(buf), "%.1f GiB", gib);
  } else if (mib >= 1) {
    std::snprintf(buf, sizeof(buf), "%.0f MiB", mib);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f KiB", bytes / 1024.0);
  }
  return buf;
}

std::string gbsString(double gbs) {
  // Whole numbers without a decimal. std::trunc, not a cast to int: a file
  // can give an NVLink 2^31 lanes (4.4e10 GB/s), and casting a double an int
  // cannot hold is undefined (found by the nccl_xml fuzzer).
  char buf[48];
  std::snprintf(buf, sizeof(buf), gbs == std::trunc(gbs) ? "%.0f GB/s" : "%.1f GB/s", gbs);
  return buf;
}

void printTree(std::ostream& os, const Topology& t) {
  std::set<std::pair<int, int>> cores;  // (package, core): any ints a file gives
  for (const Pu& pu : t.pus) cores.insert({pu.package, pu.core});
  uint64_t memory = 0;
  for (int c : t.cpuNodes()) memory += t.nodes[c].memoryBytes;
  os << "Machine " << (t.hostname.empty() ? "?" : t.hostname) << " (" << t.source << "): " << t.packageCount()
     << " sockets, " << t.cpuNodes().size() << " NUMA nodes, " << cores.size() << " cores, " << t.pus.size() << " PUs"
     << (memory ? cat(", ", bytesString(memory)) : "") << ", " << t.gpus().size() << " GPUs, " << t.nics().size()
     << " NICs, " << t.nvSwitches().size() << " NVSwitches\n";
  if (!t.caches.empty()) {
    os << "  caches:";
    for (const CacheLevel& c : t.caches) os << " L" << c.level << c.type << " " << bytesString(c.bytes) << " x" << c.count << ";";
    os << "\n";
  }
  std::set<int> packages;
  for (int c : t.cpuNodes()) packages.insert(t.nodes[c].package);
  for (int p : packages) {
    os << "  Package " << p << "\n";
    for (int c : t.cpuNodes()) {
      const Node& cpu = t.nodes[c];
      if (cpu.package != p) continue;
      // With the machine's PUs known (hwloc), a NUMA node without CPUs has
      // none (HBM, MCDRAM, CXL memory); from a file without affinity, who knows.
      bool memoryOnly = cpu.cpus.empty() && !t.pus.empty();
      os << "    NUMA " << cpu.numa << ": CPUs " << (memoryOnly ? "none (memory only)" : cpuListString(cpu.cpus));
      if (cpu.memoryBytes) os << ", " << bytesString(cpu.memoryBytes);
      if (!cpu.vendor.empty()) os << ", " << cpu.vendor;
      os << "\n";
      for (int child : cpu.children) printDevice(os, t, child, 3);
    }
  }
  std::vector<int> fabric;
  for (int s : t.nvSwitches()) {
    if (t.nodes[s].implicit) fabric.push_back(s);
  }
  if (!fabric.empty()) {
    // NCCL's placeholder target ("fffffff:ffff:ff") stands for switches a VM hides.
    os << "  NVSwitch fabric (NVLink only, not in the PCI tree):\n";
    for (int s : fabric) {
      const Node& sw = t.nodes[s];
      os << "    " << describe(t, sw) << (normalizeBusId(sw.pci.busId) ? "" : ", address hidden from this machine") << "\n";
    }
  }
}

void printVersions(std::ostream& os, const Versions& v) {
  for (const auto& [name, value] : v.items) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "  %-17s", (name + ":").c_str());
    os << buf << value << "\n";
  }
  for (const IbDevice& d : v.ibDevices) os << "    " << d.name << " firmware " << d.firmware << "\n";
}

}  // namespace loom::topo

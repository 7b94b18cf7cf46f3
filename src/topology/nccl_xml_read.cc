// NCCL topology XML -> graph. Accepts what NCCL's own reader accepts
// (src/graph/xml.cc, topo.cc): unknown attributes, empty or odd values where
// NCCL falls back to a default, elements it does not know (skipped with a
// warning, as NCCL skips them). Refuses, naming file and line, what cannot
// describe a machine: malformed XML, a device without a bus id, values that
// are not numbers, contradictions.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "base/logging.h"
#include "topology/nccl_xml.h"
#include "topology/nccl_xml_internal.h"
#include "topology/paths.h"
#include "topology/pci.h"
#include "topology/xml_doc.h"

namespace loom::topo {

namespace {

const std::set<std::string> kCpuAttrs = {"numaid",   "affinity", "arch",    "vendor",
                                         "familyid", "modelid",  "package", "memory"};
const std::set<std::string> kPciAttrs = {
    "busid", "class", "vendor", "device", "subsystem_vendor", "subsystem_device", "link_speed", "link_width"};
const std::set<std::string> kGpuAttrs = {"dev", "sm", "rank", "gdr", "mlopart"};
const std::set<std::string> kNetAttrs = {"name", "speed", "port", "gdr"};

// Elements NCCL reads that Loom does not model: kept verbatim for the dump.
const std::set<std::string> kKeptInPci = {"pcilink"};  // a PCI-to-PCI link of a Broadcom switch
const std::set<std::string> kKeptInGpu = {"c2c"};      // Grace's chip-to-chip link to its CPU
// Elements with a meaning in some other place: misplaced, they would lose a device.
const std::set<std::string> kModelled = {"system", "cpu", "pci", "gpu", "nic", "net", "nvlink"};

class NcclReader {
 public:
  explicit NcclReader(const XmlDoc& doc) : doc_(doc), t_(std::make_unique<Topology>()) {}

  std::unique_ptr<Topology> read(const Topology* detected) {
    const xmlNode* root = doc_.root();
    if (elementName(root) != "system")
      doc_.failAt(root, "root element is <", elementName(root), ">, expected <system>");
    std::string version = attrValue(root, "version");
    if (parseNcclNumber(version) != 1) {
      if (version.empty()) doc_.failAt(root, "<system> has no version attribute (expected version=\"1\")");
      doc_.failAt(root, "<system> has version \"", version, "\"; Loom reads NCCL's version \"1\"");
    }
    t_->source = "NCCL XML " + doc_.path();
    std::set<const xmlNode*> otherHosts = cpusOfOtherHosts(*t_, doc_, root);
    for (xmlNode* c : elements(root)) {
      if (otherHosts.count(c)) continue;
      if (elementName(c) == "cpu") {
        readCpu(c);
      } else {
        other(c, "system", "<cpu>");
      }
    }
    if (t_->cpuNodes().empty()) doc_.failAt(root, "<system> holds no <cpu> element");
    numberUnknownNumaNodes();
    // After fill-in, so that an NVLink may name a GPU that detection adds.
    if (detected) fillFromDetected(*t_, *detected);
    resolveNvlinks(*t_, doc_, pending_);
    t_->finish();
    return std::move(t_);
  }

 private:
  // An element that has no place here. NCCL skips elements it does not
  // know, and so does Loom, saying so once per name; one that NCCL knows
  // elsewhere would silently lose a device, so it is refused.
  void other(const xmlNode* n, const char* inside, const char* expected) {
    std::string name = elementName(n);
    if (kModelled.count(name)) {
      doc_.failAt(n, "<", name, "> cannot appear inside <", inside, "> (expected ", expected, ")");
    }
    if (!skipped_.insert(name).second) return;
    warnAt(*t_, doc_, n,
           "unknown element <" + name + "> inside <" + inside + "> skipped with what it holds (expected " + expected +
               ")");
  }

  // A number as NCCL writes it (decimal or 0x-hex), or -1 when absent, empty
  // or negative: NCCL writes -1 for "unknown" (a NIC's speed, a GPU's dev).
  // integer() is for the attributes kept in an int, and refuses what an int
  // cannot hold.
  int64_t number(const xmlNode* n, const char* attr) const { return ncclNumber(doc_, n, attr); }
  int integer(const xmlNode* n, const char* attr) const { return ncclInt(doc_, n, attr); }

  void readCpu(const xmlNode* n) {
    Node cpu;
    cpu.kind = NodeKind::kCpu;
    cpu.line = lineOf(n);
    if (attrValue(n, "numaid").find_first_not_of(" \t") == std::string::npos) {
      doc_.failAt(n, "<cpu> has no numaid attribute");
    }
    cpu.numa = integer(n, "numaid");  // -1: sysfs did not know (NCCL writes it so)
    if (cpu.numa >= 0 && numaLines_.count(cpu.numa)) {
      doc_.failAt(n, "<cpu> numaid=\"", std::to_string(cpu.numa), "\" was already defined on line ",
                  std::to_string(numaLines_[cpu.numa]));
    }
    if (cpu.numa >= 0) numaLines_[cpu.numa] = cpu.line;
    std::string affinity = attrValue(n, "affinity");
    if (!affinity.empty() && !parseAffinity(affinity, &cpu.cpus)) {
      doc_.failAt(n, "<cpu> has affinity=\"", affinity, "\" which is not a CPU mask (hex words separated by commas)");
    }
    checkOverlap(n, cpu);
    cpu.arch = attrValue(n, "arch");
    cpu.vendor = attrValue(n, "vendor");
    cpu.familyId = integer(n, "familyid");
    cpu.modelId = integer(n, "modelid");
    cpu.package = integer(n, "package");
    int64_t memory = number(n, "memory");
    cpu.memoryBytes = memory > 0 ? static_cast<uint64_t>(memory) : 0;
    cpu.extra = extras(n, kCpuAttrs);
    int id = t_->addNode(std::move(cpu));
    for (xmlNode* c : elements(n)) {
      if (elementName(c) == "pci") {
        readPci(c, id);
      } else if (elementName(c) == "nic") {
        readNicWithoutPci(c, id);
      } else {
        other(c, "cpu", "<pci> or <nic>");
      }
    }
  }

  // NCCL writes numaid="-1" where sysfs has no NUMA node for a device (VMs,
  // one-node machines); such a <cpu> takes the lowest id no other uses.
  void numberUnknownNumaNodes() {
    for (int id : t_->cpuNodes()) {
      Node& cpu = t_->nodes[id];
      if (cpu.numa >= 0) continue;
      int free = 0;
      while (numaLines_.count(free)) free++;
      cpu.numa = free;
      numaLines_[free] = cpu.line;
      LOOM_INFO("INIT", -1, doc_.path() << ":" << cpu.line << ": <cpu numaid=\"-1\"> taken as NUMA node " << free);
    }
  }

  void checkOverlap(const xmlNode* n, const Node& cpu) {
    for (int c : cpu.cpus) {
      auto [it, fresh] = cpuOwner_.emplace(c, cpu.line);
      if (!fresh) {
        doc_.failAt(n, "<cpu numaid=\"", std::to_string(cpu.numa), "\"> affinity includes CPU ", std::to_string(c),
                    ", which the <cpu> on line ", std::to_string(it->second), " already has");
      }
    }
  }

  PciInfo readPciInfo(const xmlNode* n) {
    PciInfo p;
    std::string busId = attrValue(n, "busid");
    if (busId.empty()) doc_.failAt(n, "<pci> has no busid attribute");
    auto canonical = normalizeBusId(busId);
    if (!canonical) doc_.failAt(n, "<pci> has bus id '", busId, "' which is not a PCI address (dddd:bb:dd.f)");
    p.busId = *canonical;
    if (busLines_.count(p.busId)) {
      doc_.failAt(n, "<pci> bus id ", p.busId, " was already used on line ", std::to_string(busLines_[p.busId]));
    }
    busLines_[p.busId] = lineOf(n);
    p.classCode = integer(n, "class");
    p.vendor = integer(n, "vendor");
    p.device = integer(n, "device");
    p.subVendor = integer(n, "subsystem_vendor");
    p.subDevice = integer(n, "subsystem_device");
    // sysfs writes "Unknown" (or nothing) for links it cannot read; NCCL
    // then assumes a default rate, and Loom its default bandwidth.
    p.linkSpeed = attrValue(n, "link_speed");
    p.linkWidth = std::max(0, integer(n, "link_width"));
    return p;
  }

  // The class decides what a <pci> is, as in NCCL; without one, its children do.
  NodeKind pciKind(const xmlNode* n, const PciInfo& p) {
    bool gpu = hasChild(n, "gpu"), nic = hasChild(n, "nic"), pci = hasChild(n, "pci");
    int32_t c = p.classCode;
    if (c < 0) return gpu ? NodeKind::kGpu : nic ? NodeKind::kNic : pci ? NodeKind::kPciSwitch : NodeKind::kPciDevice;
    NodeKind kind = pciClassKind(c, p.vendor);
    std::string what = "<pci> " + p.busId + " of class " + hexString(c, 6);
    if (gpu && kind != NodeKind::kGpu)
      doc_.failAt(n, what, " holds a <gpu>, but that class is not a display controller");
    if (nic && kind != NodeKind::kNic && kind != NodeKind::kPciDevice) {
      doc_.failAt(n, what, " holds a <nic>, but that class is not a network controller");
    }
    if (pci && kind != NodeKind::kPciSwitch) doc_.failAt(n, what, " holds other <pci> devices, but is not a bridge");
    return nic && kind == NodeKind::kPciDevice ? NodeKind::kNic : kind;
  }

  void readPci(const xmlNode* n, int parent) {
    Node node;
    node.pci = readPciInfo(n);
    node.kind = pciKind(n, node.pci);
    node.line = lineOf(n);
    node.parent = parent;
    node.extra = extras(n, kPciAttrs);
    node.rdma = node.kind == NodeKind::kNic && isRdmaPci(node.pci);
    // NCCL reads width 0 (sysfs could not tell) as x16.
    double bw = pciUsableGBs(node.pci.linkSpeed, node.pci.linkWidth > 0 ? node.pci.linkWidth : 16);
    int id = t_->addNode(std::move(node));
    t_->addLink(id, parent, LinkKind::kPci, bw > 0 ? bw : 24.0, kPciLatencyUs);
    for (xmlNode* c : elements(n)) {
      std::string name = elementName(c);
      if (name == "pci") {
        readPci(c, id);
      } else if (name == "gpu") {
        readGpu(c, id, bw > 0 ? bw : 24.0);
      } else if (name == "nic") {
        readNets(c, id);
      } else if (kKeptInPci.count(name)) {
        t_->nodes[id].rawChildren.push_back(RawElement{name, allAttributes(c)});
      } else {
        other(c, "pci", "<pci>, <gpu> or <nic>");
      }
    }
    notANicWithoutNetPorts(t_->nodes[id]);
  }

  // NCCL's net transport uses only <net> elements whose net attribute is not
  // 0 (ncclTopoAddNic); a NIC of which it uses none is, for NCCL, no network
  // device (a GIN- or CollNet-only port, or one fused into a virtual NIC), so
  // Loom does not count it either. Fill-in from detection can make it a NIC
  // again, as NCCL's plugins re-mark the devices they find on the machine.
  void notANicWithoutNetPorts(Node& n) {
    if (n.kind != NodeKind::kNic || !n.nets.empty() || n.nonNetPorts.empty()) return;
    n.kind = NodeKind::kPciDevice;
    n.rdma = false;
    LOOM_INFO("INIT", -1,
              doc_.path() << ":" << n.line << ": NIC " << n.pci.busId
                          << " has no <net> NCCL's network transport uses (all net=\"0\"): not a NIC");
  }

  // Two <gpu> under one <pci>: NCCL's ncclTopoAddGpuSub gives each its own
  // GPU node. With different mlopart (the two partitions of an R200/GB300-
  // style GPU) each is a device of its own (a DEV node per partition, which
  // NCCL ids by the bus id with the partition in its low bits), and so each
  // is a Loom GPU; the same partition twice is two ranks on one device, which
  // Loom, placing ranks on devices, models once.
  void readGpu(const xmlNode* n, int pciNode, double pciGBs) {
    int part = integer(n, "mlopart");
    if (part > 1) {
      doc_.failAt(n, "<gpu> has mlopart=\"", part, "\"; NCCL splits a GPU into at most two partitions (0 and 1)");
    }
    auto& seen = gpusOfPci_[pciNode];  // (mlopart, line) of the <gpu> elements read so far
    for (auto [p, line] : seen) {
      if (p != part) continue;
      warnAt(*t_, doc_, n,
             "a second <gpu> for the same device as the <gpu> on line " + std::to_string(line) +
                 " (two ranks on one GPU): Loom models the device once, keeps this element for the dump without "
                 "its children, and reads NVLinks from the first, as NCCL does");
      t_->nodes[pciNode].rawChildren.push_back(RawElement{"gpu", allAttributes(n)});
      return;
    }
    seen.emplace_back(part, lineOf(n));
    int id = seen.size() == 1 ? pciNode : addPartition(pciNode, n, pciGBs);
    Node& gpu = t_->nodes[id];
    gpu.mloPart = part;
    gpu.gpuDev = integer(n, "dev");
    gpu.sm = integer(n, "sm");
    gpu.gpuRank = integer(n, "rank");
    gpu.gpuGdr = integer(n, "gdr");
    gpu.gpuExtra = extras(n, kGpuAttrs);
    for (xmlNode* c : elements(n)) {
      std::string name = elementName(c);
      if (kKeptInGpu.count(name)) {
        t_->nodes[id].gpuRawChildren.push_back(RawElement{name, allAttributes(c)});
        continue;
      }
      if (name != "nvlink") {
        other(c, "gpu", "<nvlink>");
        continue;
      }
      int count = integer(c, "count");
      pending_.push_back({id, attrValue(c, "target"), count > 0 ? count : 1, integer(c, "tclass"), c});
    }
  }

  // The second partition of a GPU: another GPU on the same PCI function and link.
  int addPartition(int first, const xmlNode* n, double pciGBs) {
    Node part;
    part.kind = NodeKind::kGpu;
    part.pci = t_->nodes[first].pci;
    part.parent = t_->nodes[first].parent;
    part.partitionOf = first;
    part.line = lineOf(n);
    int id = t_->addNode(std::move(part));
    t_->addLink(id, t_->nodes[id].parent, LinkKind::kPci, pciGBs, kPciLatencyUs);
    return id;
  }

  void readNets(const xmlNode* n, int id) {
    Node& nic = t_->nodes[id];
    for (xmlNode* c : elements(n)) {
      if (elementName(c) != "net") {
        other(c, "nic", "<net>");
        continue;
      }
      NetPort port;
      port.name = attrValue(c, "name");
      port.speedMbps = number(c, "speed");
      port.port = integer(c, "port");
      port.gdr = integer(c, "gdr");
      port.extra = extras(c, kNetAttrs);
      if (!usedByNetTransport(doc_, c)) {
        nic.nonNetPorts.push_back(std::move(port));
        continue;
      }
      // NCCL writes guid and gdr for every port, its socket transport's
      // Ethernet ports too (gdr="0"); only GPUDirect RDMA (gdr="1") proves
      // an RDMA device where the PCI ids do not say.
      bool rdmaPort = port.gdr > 0;
      nic.nets.push_back(std::move(port));
      nic.rdma = nic.rdma || rdmaPort;
    }
  }

  // <nic> straight under <cpu>: a NIC NCCL could not place in the PCI tree.
  void readNicWithoutPci(const xmlNode* n, int cpu) {
    Node nic;
    nic.kind = NodeKind::kNic;
    nic.line = lineOf(n);
    nic.parent = cpu;
    int id = t_->addNode(std::move(nic));
    t_->addLink(id, cpu, LinkKind::kPci, 24.0, kPciLatencyUs);
    readNets(n, id);
    notANicWithoutNetPorts(t_->nodes[id]);
  }

  const XmlDoc& doc_;
  std::unique_ptr<Topology> t_;
  std::map<int, int> numaLines_, cpuOwner_;
  std::map<std::string, int> busLines_;
  std::vector<PendingNvlink> pending_;
  std::set<std::string> skipped_;  // unknown element names already reported
  std::map<int, std::vector<std::pair<int, int>>> gpusOfPci_;
};

}  // namespace

std::unique_ptr<Topology> readNcclXml(const XmlDoc& doc, const Topology* detected) {
  return NcclReader(doc).read(detected);
}

}  // namespace loom::topo

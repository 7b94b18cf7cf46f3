// NCCL topology XML -> graph. Every message names the file and line.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "core/logging.h"
#include "topology/nccl_xml.h"
#include "topology/xml_doc.h"
#include "topology/paths.h"
#include "topology/pci.h"

namespace loom::topo {

namespace {

const std::set<std::string> kCpuAttrs = {"numaid", "affinity", "arch", "vendor", "familyid", "modelid", "package", "memory"};
const std::set<std::string> kPciAttrs = {"busid",  "class",            "vendor",     "device",
                                         "subsystem_vendor", "subsystem_device", "link_speed", "link_width"};
const std::set<std::string> kGpuAttrs = {"dev", "sm", "rank", "gdr"};
const std::set<std::string> kNetAttrs = {"name", "speed", "port", "gdr"};

std::vector<xmlNode*> elements(const xmlNode* parent) {
  std::vector<xmlNode*> out;
  for (xmlNode* c = parent->children; c != nullptr; c = c->next) {
    if (c->type == XML_ELEMENT_NODE) out.push_back(c);
  }
  return out;
}

bool hasChild(const xmlNode* n, const char* name) {
  for (xmlNode* c : elements(n)) {
    if (elementName(c) == name) return true;
  }
  return false;
}

Attributes extras(const xmlNode* n, const std::set<std::string>& known) {
  Attributes out;
  for (xmlAttr* a = n->properties; a != nullptr; a = a->next) {
    std::string name = reinterpret_cast<const char*>(a->name);
    if (!known.count(name)) out.emplace_back(name, attrValue(n, name.c_str()));
  }
  return out;
}

bool isRdmaPci(const PciInfo& p) {
  if (p.classCode >= 0 && (p.classCode >> 8) == 0x0207) return true;  // InfiniBand
  if (p.vendor == 0x15b3) return true;                                 // Mellanox / NVIDIA networking
  return p.vendor == 0x1d0f && (p.device & 0xfff0) == 0xefa0;          // AWS EFA
}

struct PendingNvlink {
  int gpu;
  std::string target;
  int count;
  int32_t tclass;
  const xmlNode* where;
};

class NcclReader {
 public:
  explicit NcclReader(const XmlDoc& doc) : doc_(doc), t_(std::make_unique<Topology>()) {}

  std::unique_ptr<Topology> read(const Topology* detected) {
    const xmlNode* root = doc_.root();
    if (elementName(root) != "system") doc_.failAt(root, "root element is <", elementName(root), ">, expected <system>");
    std::string version = attrValue(root, "version");
    if (version != "1") {
      if (version.empty()) doc_.failAt(root, "<system> has no version attribute (expected version=\"1\")");
      doc_.failAt(root, "<system> has version \"", version, "\"; Loom reads NCCL's version \"1\"");
    }
    t_->source = "NCCL XML " + doc_.path();
    for (xmlNode* c : elements(root)) {
      if (elementName(c) != "cpu") unknown(c, "system", "<cpu>");
      readCpu(c);
    }
    if (t_->cpuNodes().empty()) doc_.failAt(root, "<system> holds no <cpu> element");
    resolveNvlinks();
    if (detected) fillFromDetected(*t_, *detected);
    t_->finish();
    return std::move(t_);
  }

 private:
  [[noreturn]] void unknown(const xmlNode* n, const char* inside, const char* expected) const {
    doc_.failAt(n, "unknown element <", elementName(n), "> inside <", inside, "> (expected ", expected, ")");
  }

  // A whole number, or -1 when absent.
  int64_t number(const xmlNode* n, const char* attr) const {
    if (!hasAttr(n, attr)) return -1;
    std::string v = attrValue(n, attr);
    char* end = nullptr;
    bool hex = v.size() > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X');
    long long x = std::strtoll(v.c_str(), &end, hex ? 16 : 10);
    if (v.empty() || *end != '\0' || x < 0) {
      doc_.failAt(n, "<", elementName(n), "> has ", attr, "=\"", v, "\" which is not a non-negative number");
    }
    return x;
  }

  void readCpu(const xmlNode* n) {
    Node cpu;
    cpu.kind = NodeKind::kCpu;
    cpu.line = lineOf(n);
    cpu.numa = static_cast<int>(number(n, "numaid"));
    if (cpu.numa < 0) doc_.failAt(n, "<cpu> has no numaid attribute");
    if (numaLines_.count(cpu.numa)) {
      doc_.failAt(n, "<cpu> numaid=\"", std::to_string(cpu.numa), "\" was already defined on line ",
                         std::to_string(numaLines_[cpu.numa]));
    }
    numaLines_[cpu.numa] = cpu.line;
    std::string affinity = attrValue(n, "affinity");
    if (!affinity.empty() && !parseAffinity(affinity, &cpu.cpus)) {
      doc_.failAt(n, "<cpu> has affinity=\"", affinity, "\" which is not a CPU mask (hex words separated by commas)");
    }
    checkOverlap(n, cpu);
    cpu.arch = attrValue(n, "arch");
    cpu.vendor = attrValue(n, "vendor");
    cpu.familyId = static_cast<int>(number(n, "familyid"));
    cpu.modelId = static_cast<int>(number(n, "modelid"));
    cpu.package = static_cast<int>(number(n, "package"));
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
        unknown(c, "cpu", "<pci> or <nic>");
      }
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
    p.classCode = static_cast<int32_t>(number(n, "class"));
    p.vendor = static_cast<int32_t>(number(n, "vendor"));
    p.device = static_cast<int32_t>(number(n, "device"));
    p.subVendor = static_cast<int32_t>(number(n, "subsystem_vendor"));
    p.subDevice = static_cast<int32_t>(number(n, "subsystem_device"));
    p.linkSpeed = attrValue(n, "link_speed");
    if (!p.linkSpeed.empty() && gigaTransfers(p.linkSpeed) <= 0) {
      doc_.failAt(n, "<pci> has link_speed=\"", p.linkSpeed, "\"; expected a rate such as \"16 GT/s\"");
    }
    p.linkWidth = static_cast<int>(std::max<int64_t>(0, number(n, "link_width")));
    return p;
  }

  // The class decides what a <pci> is, as in NCCL; without one, its children do.
  NodeKind pciKind(const xmlNode* n, const PciInfo& p) {
    bool gpu = hasChild(n, "gpu"), nic = hasChild(n, "nic"), pci = hasChild(n, "pci");
    int32_t c = p.classCode;
    if (c < 0) return gpu ? NodeKind::kGpu : nic ? NodeKind::kNic : pci ? NodeKind::kPciSwitch : NodeKind::kPciDevice;
    NodeKind kind = isBridgeClass(c)                                                       ? NodeKind::kPciSwitch
                    : isDisplayClass(c)                                                    ? NodeKind::kGpu
                    : isNetworkClass(c)                                                    ? NodeKind::kNic
                    : isNvSwitchClass(c) && (p.vendor < 0 || p.vendor == kNvidiaVendor) ? NodeKind::kNvSwitch
                                                                                           : NodeKind::kPciDevice;
    std::string what = "<pci> " + p.busId + " of class " + hexString(c, 6);
    if (gpu && kind != NodeKind::kGpu) doc_.failAt(n, what, " holds a <gpu>, but that class is not a display controller");
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
    double bw = pciUsableGBs(node.pci.linkSpeed, node.pci.linkWidth);
    int id = t_->addNode(std::move(node));
    t_->addLink(id, parent, LinkKind::kPci, bw > 0 ? bw : 24.0, kPciLatencyUs);
    for (xmlNode* c : elements(n)) {
      std::string name = elementName(c);
      if (name == "pci") {
        readPci(c, id);
      } else if (name == "gpu") {
        readGpu(c, id);
      } else if (name == "nic") {
        readNets(c, id);
      } else {
        unknown(c, "pci", "<pci>, <gpu> or <nic>");
      }
    }
  }

  void readGpu(const xmlNode* n, int id) {
    Node& gpu = t_->nodes[id];
    gpu.gpuDev = static_cast<int>(number(n, "dev"));
    gpu.sm = static_cast<int>(number(n, "sm"));
    gpu.gpuRank = static_cast<int>(number(n, "rank"));
    gpu.gpuGdr = static_cast<int>(number(n, "gdr"));
    gpu.gpuExtra = extras(n, kGpuAttrs);
    for (xmlNode* c : elements(n)) {
      if (elementName(c) != "nvlink") unknown(c, "gpu", "<nvlink>");
      std::string target = attrValue(c, "target");
      auto canonical = normalizeBusId(target);
      if (!canonical) doc_.failAt(c, "<nvlink> has target '", target, "' which is not a PCI address");
      int64_t count = number(c, "count");
      pending_.push_back({id, *canonical, count > 0 ? static_cast<int>(count) : 1,
                          static_cast<int32_t>(number(c, "tclass")), c});
    }
  }

  void readNets(const xmlNode* n, int id) {
    Node& nic = t_->nodes[id];
    for (xmlNode* c : elements(n)) {
      if (elementName(c) != "net") unknown(c, "nic", "<net>");
      NetPort port;
      port.name = attrValue(c, "name");
      port.speedMbps = number(c, "speed");
      port.port = static_cast<int>(number(c, "port"));
      port.gdr = static_cast<int>(number(c, "gdr"));
      port.extra = extras(c, kNetAttrs);
      // NCCL dumps write a GUID and a gdr flag for RDMA ports only; a plain
      // Ethernet port (socket transport) has neither.
      bool rdmaPort = port.gdr >= 0 || hasAttr(c, "guid");
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
  }

  int nvlinkTarget(const PendingNvlink& p) {
    int target = t_->findBusId(p.target);
    if (target >= 0) {
      NodeKind k = t_->nodes[target].kind;
      if (target == p.gpu) doc_.failAt(p.where, "<nvlink> from ", p.target, " targets the GPU itself");
      if (k != NodeKind::kGpu && k != NodeKind::kNvSwitch && k != NodeKind::kPciDevice) {
        doc_.failAt(p.where, "<nvlink> target ", p.target, " is a ", nodeKindName(k), ", not a GPU or NVSwitch");
      }
      return target;
    }
    if (isDisplayClass(p.tclass)) {
      doc_.failAt(p.where, "<nvlink> target ", p.target, " is a GPU (tclass ", hexString(p.tclass, 6),
                               ") that the file does not list");
    }
    if (p.tclass >= 0 && !isNvSwitchClass(p.tclass)) return -1;  // a CPU (POWER9): not modelled
    // NVSwitches appear only as targets in NCCL dumps; one node per bus id.
    Node sw;
    sw.kind = NodeKind::kNvSwitch;
    sw.pci.busId = p.target;
    sw.pci.classCode = p.tclass >= 0 ? p.tclass : 0x068000;
    sw.implicit = true;
    busLines_[p.target] = lineOf(p.where);
    return t_->addNode(std::move(sw));
  }

  void resolveNvlinks() {
    for (const PendingNvlink& p : pending_) {
      int target = nvlinkTarget(p);
      if (target < 0) {
        LOOM_INFO("INIT", -1, doc_.path() << ":" << lineOf(p.where) << ": NVLink to CPU " << p.target << " ignored");
        continue;
      }
      bool seen = false;
      for (const Link& l : t_->links) {
        seen = seen || (l.kind == LinkKind::kNvLink && ((l.a == p.gpu && l.b == target) || (l.a == target && l.b == p.gpu)));
      }
      if (seen) continue;  // each GPU of a pair lists the link
      double bw = p.count * nvlinkGBsPerLane(t_->nodes[p.gpu].sm);
      t_->addLink(p.gpu, target, LinkKind::kNvLink, bw, kNvlLatencyUs, p.count);
    }
  }

  const XmlDoc& doc_;
  std::unique_ptr<Topology> t_;
  std::map<int, int> numaLines_, cpuOwner_;
  std::map<std::string, int> busLines_;
  std::vector<PendingNvlink> pending_;
};

}  // namespace

bool parseAffinity(const std::string& text, std::vector<int>* cpus) {
  std::vector<std::string> words;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    words.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  cpus->clear();
  int base = 0;
  for (auto it = words.rbegin(); it != words.rend(); ++it, base += 32) {
    if (it->empty() || it->size() > 8 || it->find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      return false;
    }
    unsigned long w = std::strtoul(it->c_str(), nullptr, 16);
    for (int b = 0; b < 32; b++) {
      if (w & (1ul << b)) cpus->push_back(base + b);
    }
  }
  std::sort(cpus->begin(), cpus->end());
  return true;
}

std::unique_ptr<Topology> readNcclXml(const XmlDoc& doc, const Topology* detected) {
  return NcclReader(doc).read(detected);
}

}  // namespace loom::topo

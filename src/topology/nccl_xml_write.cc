// Graph -> NCCL topology XML, laid out as NCCL's own dumps are.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "topology/nccl_xml.h"
#include "topology/pci.h"

namespace loom::topo {

namespace {

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// One element's attributes, skipping unknown values.
class Attrs {
 public:
  Attrs& add(const char* name, const std::string& value) {
    if (!value.empty()) os_ << ' ' << name << "=\"" << escaped(value) << '"';
    return *this;
  }
  Attrs& num(const char* name, int64_t value) { return value >= 0 ? add(name, std::to_string(value)) : *this; }
  Attrs& hex(const char* name, int32_t value, int digits) { return value >= 0 ? add(name, hexString(value, digits)) : *this; }
  Attrs& extra(const Attributes& attrs) {
    for (const auto& [k, v] : attrs) os_ << ' ' << k << "=\"" << escaped(v) << '"';
    return *this;
  }
  std::string str() const { return os_.str(); }

 private:
  std::ostringstream os_;
};

class Writer {
 public:
  explicit Writer(const Topology& t) : t_(t) {}

  std::string write() {
    // The mask is as wide as the CPUs the <cpu> elements list, nothing
    // else: a reader sees only those, so a PU outside every NUMA node (an
    // edited hwloc file) must not widen it, or the dump would not read back
    // to the same text.
    int maxCpu = 0;
    for (int c : t_.cpuNodes()) {
      for (int cpu : t_.nodes[c].cpus) maxCpu = std::max(maxCpu, cpu);
    }
    affinityWords_ = maxCpu / 32 + 1;
    out_ << "<system version=\"1\">\n";
    for (int c : t_.cpuNodes()) writeCpu(t_.nodes[c]);
    out_ << "</system>\n";
    return out_.str();
  }

 private:
  void open(int depth, const char* tag, const std::string& attrs, bool empty) {
    out_ << std::string(2 * depth, ' ') << '<' << tag << attrs << (empty ? "/>\n" : ">\n");
  }
  void close(int depth, const char* tag) { out_ << std::string(2 * depth, ' ') << "</" << tag << ">\n"; }

  void writeCpu(const Node& cpu) {
    Attrs a;
    a.num("numaid", cpu.numa);
    if (!cpu.cpus.empty()) a.add("affinity", formatAffinity(cpu.cpus, affinityWords_));
    a.add("arch", cpu.arch).add("vendor", cpu.vendor).num("familyid", cpu.familyId).num("modelid", cpu.modelId);
    a.num("package", cpu.package);
    if (cpu.memoryBytes > 0) a.num("memory", static_cast<int64_t>(cpu.memoryBytes));
    a.extra(cpu.extra);
    open(1, "cpu", a.str(), cpu.children.empty());
    for (int c : cpu.children) writeChild(t_.nodes[c], 2);
    if (!cpu.children.empty()) close(1, "cpu");
  }

  void writeChild(const Node& n, int depth) {
    if (n.partitionOf >= 0) return;  // a second MLOPart partition: a <gpu> inside its first's <pci>
    if (n.pci.busId.empty()) {  // a NIC outside the PCI tree
      writeNets(n, depth);
      return;
    }
    Attrs a;
    a.add("busid", n.pci.busId).hex("class", n.pci.classCode, 6).hex("vendor", n.pci.vendor, 4);
    a.hex("device", n.pci.device, 4).hex("subsystem_vendor", n.pci.subVendor, 4).hex("subsystem_device", n.pci.subDevice, 4);
    a.add("link_speed", n.pci.linkSpeed);
    if (n.pci.linkWidth > 0) a.num("link_width", n.pci.linkWidth);
    a.extra(n.extra);
    bool ports = !n.nets.empty() || !n.nonNetPorts.empty();
    bool hasBody = !n.children.empty() || n.kind == NodeKind::kGpu || ports || !n.rawChildren.empty();
    open(depth, "pci", a.str(), !hasBody);
    for (int c : n.children) writeChild(t_.nodes[c], depth + 1);
    if (n.kind == NodeKind::kGpu) {
      writeGpu(n, depth + 1);
      for (const Node& other : t_.nodes) {
        if (other.partitionOf == n.id) writeGpu(other, depth + 1);
      }
    }
    if (ports) writeNets(n, depth + 1);
    writeRaw(n.rawChildren, depth + 1);
    if (hasBody) close(depth, "pci");
  }

  void writeGpu(const Node& gpu, int depth) {
    // NVLink peers by bus id, so the order does not depend on link history.
    std::vector<std::pair<std::string, const Link*>> peers;
    for (const Link* l : t_.linksOf(gpu.id)) {
      if (l->kind == LinkKind::kNvLink) peers.emplace_back(t_.nodes[l->a == gpu.id ? l->b : l->a].pci.busId, l);
    }
    std::sort(peers.begin(), peers.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    // Both MLOPart partitions of a peer came from one <nvlink>.
    peers.erase(std::unique(peers.begin(), peers.end(), [](const auto& x, const auto& y) { return x.first == y.first; }),
                peers.end());
    Attrs a;
    a.num("dev", gpu.gpuDev >= 0 ? gpu.gpuDev : gpu.index).num("sm", gpu.sm).num("rank", gpu.gpuRank);
    a.num("gdr", gpu.gpuGdr).num("mlopart", gpu.mloPart).extra(gpu.gpuExtra);
    bool empty = peers.empty() && gpu.gpuRawChildren.empty();
    open(depth, "gpu", a.str(), empty);
    for (const auto& [busId, l] : peers) {
      const Node& peer = t_.nodes[l->a == gpu.id ? l->b : l->a];
      Attrs p;
      p.add("target", busId).num("count", l->count).hex("tclass", peer.pci.classCode, 6);
      open(depth + 1, "nvlink", p.str(), true);
    }
    writeRaw(gpu.gpuRawChildren, depth + 1);
    if (!empty) close(depth, "gpu");
  }

  // Elements Loom keeps without modelling them, as the file wrote them.
  void writeRaw(const std::vector<RawElement>& raw, int depth) {
    for (const RawElement& e : raw) {
      Attrs a;
      a.extra(e.attrs);
      open(depth, e.name.c_str(), a.str(), true);
    }
  }

  void writeNets(const Node& nic, int depth) {
    bool empty = nic.nets.empty() && nic.nonNetPorts.empty();
    open(depth, "nic", "", empty);
    for (const auto* ports : {&nic.nets, &nic.nonNetPorts}) {
      for (const NetPort& port : *ports) {
        Attrs a;
        a.add("name", port.name).num("speed", port.speedMbps).num("port", port.port).num("gdr", port.gdr);
        open(depth + 1, "net", a.extra(port.extra).str(), true);
      }
    }
    if (!empty) close(depth, "nic");
  }

  const Topology& t_;
  std::ostringstream out_;
  int affinityWords_ = 1;
};

}  // namespace

std::string formatAffinity(const std::vector<int>& cpus, int words) {
  std::vector<uint32_t> mask(static_cast<size_t>(words), 0);
  for (int c : cpus) {
    if (c >= 0 && c / 32 < words) mask[static_cast<size_t>(c / 32)] |= 1u << (c % 32);
  }
  std::string out;
  for (int w = words - 1; w >= 0; w--) {
    char buf[16];
    std::snprintf(buf, sizeof(buf), "%08x", mask[static_cast<size_t>(w)]);
    out += buf;
    if (w > 0) out += ',';
  }
  return out;
}

std::string ncclXml(const Topology& t) { return Writer(t).write(); }

void writeNcclXmlFile(const Topology& t, const std::string& path) {
  std::ofstream f(path);
  if (!f) fail(loomInvalidArgument, path + ": cannot write topology dump: " + std::strerror(errno));
  f << ncclXml(t);
  if (!f.flush()) fail(loomSystemError, path + ": writing the topology dump failed: " + std::strerror(errno));
}

}  // namespace loom::topo

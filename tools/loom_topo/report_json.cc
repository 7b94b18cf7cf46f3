// The graph as JSON, for scripts: CPU nodes, devices, links and the path
// matrix loom-topo prints.
#include <cstdio>

#include "loom_topo/report.h"
#include "topology/paths.h"
#include "topology/pci.h"

namespace loom::topo {

namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

// Appends in place: the path matrix has an entry per pair of devices, and a
// stream per entry (cat) was most of --json's time on a 1000-GPU file.
template <typename T, typename F>
std::string array(const std::vector<T>& items, F each) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); i++) {
    if (i) out += ", ";
    out += each(items[i]);
  }
  return out + "]";
}

std::string nodeJson(const Topology& t, const Node& n) {
  std::ostringstream os;
  os << "{\"id\": " << n.id << ", \"kind\": " << quoted(nodeKindName(n.kind)) << ", \"name\": " << quoted(n.name)
     << ", \"parent\": " << n.parent;
  if (n.kind == NodeKind::kCpu) {
    os << ", \"numa\": " << n.numa << ", \"package\": " << n.package << ", \"cpus\": " << quoted(cpuListString(n.cpus))
       << ", \"memory_bytes\": " << n.memoryBytes;
  }
  if (!n.pci.busId.empty()) os << ", \"busid\": " << quoted(n.pci.busId);
  if (n.pci.classCode >= 0) os << ", \"class\": " << quoted(hexString(n.pci.classCode, 6));
  if (!n.pci.linkSpeed.empty()) os << ", \"link_speed\": " << quoted(n.pci.linkSpeed);
  if (n.pci.linkWidth > 0) os << ", \"link_width\": " << n.pci.linkWidth;
  if (!n.model.empty()) os << ", \"model\": " << quoted(n.model);
  if (n.kind == NodeKind::kNic) {
    os << ", \"rdma\": " << (n.rdma ? "true" : "false")
       << ", \"ports\": " << array(n.nets, [](const NetPort& p) { return quoted(p.name); });
  }
  int cpu = t.rootCpu(n.id);
  if (n.kind != NodeKind::kCpu && cpu >= 0) os << ", \"numa\": " << t.nodes[cpu].numa;
  os << "}";
  return os.str();
}

std::string linkJson(const Topology& t, const Link& l) {
  static const char* kKinds[] = {"PCI", "NVLink", "SYS"};
  return cat("{\"a\": ", quoted(t.nodes[l.a].name), ", \"b\": ", quoted(t.nodes[l.b].name), ", \"kind\": \"",
             kKinds[static_cast<int>(l.kind)], "\", \"bandwidth_gbs\": ", number(l.bandwidthGBs),
             ", \"latency_us\": ", number(l.latencyUs), ", \"count\": ", l.count, "}");
}

std::string matrixJson(const Topology& t) {
  std::vector<int> ids = matrixNodes(t);
  auto name = [&](int id) { return quoted(t.nodes[id].name); };
  const PathFinder paths(t);
  std::string rows = array(ids, [&](int a) {
    return array(ids, [&](int b) { return quoted(a == b ? "X" : pathClassName(paths.path(a, b).cls)); });
  });
  return cat("{\"names\": ", array(ids, name), ", \"classes\": ", rows, "}");
}

}  // namespace

std::string topologyJson(const Topology& t) {
  std::ostringstream os;
  os << "{\n  \"source\": " << quoted(t.source) << ",\n  \"hostname\": " << quoted(t.hostname)
     << ",\n  \"sockets\": " << t.packageCount() << ",\n  \"numa_nodes\": " << t.cpuNodes().size()
     << ",\n  \"pus\": " << t.pus.size() << ",\n  \"gpus\": " << t.gpus().size() << ",\n  \"nics\": " << t.nics().size()
     << ",\n  \"nvswitches\": " << t.nvSwitches().size() << ",\n  \"nodes\": [\n";
  for (size_t i = 0; i < t.nodes.size(); i++) os << "    " << nodeJson(t, t.nodes[i]) << (i + 1 < t.nodes.size() ? ",\n" : "\n");
  os << "  ],\n  \"links\": [\n";
  for (size_t i = 0; i < t.links.size(); i++) os << "    " << linkJson(t, t.links[i]) << (i + 1 < t.links.size() ? ",\n" : "\n");
  os << "  ],\n  \"paths\": " << matrixJson(t) << "\n}\n";
  return os.str();
}

}  // namespace loom::topo

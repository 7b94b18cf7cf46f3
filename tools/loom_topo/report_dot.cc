// The graph for Graphviz: `loom-topo --dot | dot -Tpng > machine.png`.
// Sockets are clusters; NVLink is drawn green and bold, PCIe grey.
#include <set>

#include "loom_topo/report.h"
#include "topology/paths.h"

namespace loom::topo {

namespace {

std::string nodeLine(const Node& n) {
  std::string shape = "box", color = "black", label = n.name;
  switch (n.kind) {
    case NodeKind::kCpu:
      shape = "box3d";
      label = cat("NUMA ", n.numa, "\\nCPUs ", cpuListString(n.cpus));
      break;
    case NodeKind::kPciSwitch: shape = "diamond"; label = cat("switch\\n", n.pci.busId); break;
    case NodeKind::kGpu: color = "darkgreen"; label = cat(n.name, "\\n", n.pci.busId); break;
    case NodeKind::kNic: color = "blue"; label = cat(n.name, n.rdma ? " (RDMA)" : "", "\\n", n.pci.busId); break;
    case NodeKind::kNvSwitch: shape = "hexagon"; color = "darkgreen"; label = cat("NVSwitch\\n", n.pci.busId); break;
    case NodeKind::kPciDevice: shape = "ellipse"; color = "grey"; break;
  }
  return cat("  n", n.id, " [shape=", shape, ", color=", color, ", label=\"", label, "\"];\n");
}

std::string edgeLine(const Link& l) {
  if (l.kind == LinkKind::kNvLink) {
    return cat("  n", l.a, " -- n", l.b, " [color=green, penwidth=2, label=\"NV", l.count, "\"];\n");
  }
  const char* style = l.kind == LinkKind::kSys ? "dashed" : "solid";
  // Parent first, so dot draws each CPU above its PCI tree.
  return cat("  n", l.b, " -- n", l.a, " [color=grey40, style=", style, ", label=\"", gbsString(l.bandwidthGBs), "\"];\n");
}

}  // namespace

std::string topologyDot(const Topology& t) {
  std::ostringstream os;
  os << "graph loom_topology {\n  graph [fontname=Helvetica, label=\"" << t.hostname << " (" << t.source
     << ")\"];\n  node [fontname=Helvetica, fontsize=10];\n  edge [fontname=Helvetica, fontsize=8];\n";
  std::set<int> packages;
  for (int c : t.cpuNodes()) packages.insert(t.nodes[c].package);
  for (int p : packages) {
    os << " subgraph cluster_socket" << p << " {\n  label=\"socket " << p << "\";\n";
    for (const Node& n : t.nodes) {
      int cpu = t.rootCpu(n.id);
      if (cpu >= 0 && t.nodes[cpu].package == p) os << " " << nodeLine(n);
    }
    os << " }\n";
  }
  for (const Node& n : t.nodes) {
    if (t.rootCpu(n.id) < 0) os << nodeLine(n);
  }
  for (const Link& l : t.links) os << edgeLine(l);
  std::vector<int> cpus = t.cpuNodes();
  for (size_t i = 0; i + 1 < cpus.size(); i++) {  // the socket interconnect, once per neighbour
    os << "  n" << cpus[i] << " -- n" << cpus[i + 1] << " [style=dashed, label=\"SYS\"];\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace loom::topo

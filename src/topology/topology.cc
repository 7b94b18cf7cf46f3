#include "topology/topology.h"

#include <algorithm>
#include <climits>
#include <set>

namespace loom::topo {

const char* nodeKindName(NodeKind kind) {
  switch (kind) {
    case NodeKind::kCpu: return "CPU";
    case NodeKind::kPciSwitch: return "PCI switch";
    case NodeKind::kGpu: return "GPU";
    case NodeKind::kNic: return "NIC";
    case NodeKind::kNvSwitch: return "NVSwitch";
    case NodeKind::kPciDevice: return "PCI device";
  }
  return "?";
}

int Topology::addNode(Node node) {
  node.id = static_cast<int>(nodes.size());
  nodes.push_back(std::move(node));
  Node& added = nodes.back();
  if (added.parent >= 0) nodes[added.parent].children.push_back(added.id);
  return added.id;
}

void Topology::addLink(int a, int b, LinkKind kind, double bandwidthGBs, double latencyUs, int count) {
  links.push_back(Link{a, b, kind, bandwidthGBs, latencyUs, count});
}

std::vector<int> Topology::ofKind(NodeKind kind) const {
  std::vector<int> ids;
  for (const Node& n : nodes) {
    if (n.kind == kind) ids.push_back(n.id);
  }
  std::stable_sort(ids.begin(), ids.end(), [&](int x, int y) { return nodes[x].index < nodes[y].index; });
  return ids;
}

int Topology::findBusId(const std::string& busId) const {
  if (busId.empty()) return -1;
  for (const Node& n : nodes) {
    if (n.pci.busId == busId) return n.id;
  }
  return -1;
}

std::vector<int> Topology::gpusAtBusId(const std::string& busId) const {
  std::vector<int> out;
  for (const Node& n : nodes) {
    if (n.kind == NodeKind::kGpu && !busId.empty() && n.pci.busId == busId) out.push_back(n.id);
  }
  return out;
}

int Topology::findByName(const std::string& name) const {
  for (const Node& n : nodes) {
    if (n.name == name) return n.id;
  }
  return -1;
}

int Topology::cpuNodeOfNuma(int numa) const {
  for (const Node& n : nodes) {
    if (n.kind == NodeKind::kCpu && n.numa == numa) return n.id;
  }
  return -1;
}

int Topology::rootCpu(int node) const {
  while (node >= 0 && nodes[node].kind != NodeKind::kCpu) node = nodes[node].parent;
  return node;
}

const Pu* Topology::findPu(int os) const {
  for (const Pu& pu : pus) {
    if (pu.os == os) return &pu;
  }
  return nullptr;
}

int Topology::packageCount() const {
  std::set<int> packages;
  for (int c : cpuNodes()) packages.insert(nodes[c].package);
  return static_cast<int>(packages.size());
}

std::vector<const Link*> Topology::linksOf(int node) const {
  std::vector<const Link*> out;
  for (const Link& l : links) {
    if (l.a == node || l.b == node) out.push_back(&l);
  }
  return out;
}

namespace {

// GPUs take CUDA's PCI_BUS_ID order unless a file numbered them (<gpu dev>).
bool gpuBefore(const Node& x, const Node& y) {
  int dx = x.gpuDev >= 0 ? x.gpuDev : INT_MAX, dy = y.gpuDev >= 0 ? y.gpuDev : INT_MAX;
  if (dx != dy) return dx < dy;
  if (x.pci.busId != y.pci.busId) return x.pci.busId < y.pci.busId;
  return x.mloPart < y.mloPart;  // the two partitions of one GPU
}

}  // namespace

void Topology::finish() {
  // Indexes: GPUs in CUDA order, CPU nodes by NUMA id, the rest as added.
  std::vector<Node*> byKind[6];
  for (Node& n : nodes) byKind[static_cast<int>(n.kind)].push_back(&n);
  auto& gpuList = byKind[static_cast<int>(NodeKind::kGpu)];
  std::stable_sort(gpuList.begin(), gpuList.end(), [](Node* x, Node* y) { return gpuBefore(*x, *y); });
  auto& cpuList = byKind[static_cast<int>(NodeKind::kCpu)];
  std::stable_sort(cpuList.begin(), cpuList.end(), [](Node* x, Node* y) { return x->numa < y->numa; });
  for (auto& list : byKind) {
    for (size_t i = 0; i < list.size(); i++) list[i]->index = static_cast<int>(i);
  }
  for (Node& n : nodes) {
    if (!n.name.empty()) continue;
    switch (n.kind) {
      case NodeKind::kCpu: n.name = "NUMA" + std::to_string(n.numa); break;
      case NodeKind::kGpu: n.name = "GPU" + std::to_string(n.index); break;
      case NodeKind::kNvSwitch: n.name = "NVS" + std::to_string(n.index); break;
      case NodeKind::kNic: n.name = n.nets.empty() ? "NIC" + std::to_string(n.index) : n.nets[0].name; break;
      case NodeKind::kPciSwitch: n.name = "SW " + n.pci.busId; break;
      case NodeKind::kPciDevice: n.name = "PCI " + n.pci.busId; break;
    }
  }
  // A CPU node without a package (NCCL files) is its own socket.
  for (Node* c : cpuList) {
    if (c->package < 0) c->package = c->numa;
  }
  if (pus.empty()) {
    for (Node* c : cpuList) {
      for (int cpu : c->cpus) pus.push_back(Pu{cpu, cpu, c->package, c->numa});
    }
    std::sort(pus.begin(), pus.end(), [](const Pu& x, const Pu& y) { return x.os < y.os; });
  }
}

}  // namespace loom::topo

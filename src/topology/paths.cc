#include "topology/paths.h"

#include <algorithm>
#include <tuple>
#include <vector>

namespace loom::topo {

namespace {

constexpr const char* kNames[] = {"LOC", "NVL", "NVB", "PIX", "PXB", "PHB", "SYS", "NET"};

const Link* findLink(const Topology& t, int a, int b, LinkKind kind) {
  for (const Link& l : t.links) {
    if (l.kind == kind && ((l.a == a && l.b == b) || (l.a == b && l.b == a))) return &l;
  }
  return nullptr;
}

// Node, its switches, up to (and including) its CPU node.
std::vector<int> chainToRoot(const Topology& t, int node) {
  std::vector<int> chain;
  for (int n = node; n >= 0; n = t.nodes[n].parent) chain.push_back(n);
  return chain;
}

// The PCI link from a node to its parent; missing figures count as Gen4 x16.
const Link* uplink(const Topology& t, int node) {
  int parent = t.nodes[node].parent;
  return parent < 0 ? nullptr : findLink(t, node, parent, LinkKind::kPci);
}

void crossUp(const Topology& t, const std::vector<int>& chain, size_t upto, Path* p) {
  for (size_t i = 0; i < upto; i++) {
    const Link* l = uplink(t, chain[i]);
    if (l == nullptr) continue;
    p->bandwidthGBs = std::min(p->bandwidthGBs, l->bandwidthGBs);
    p->latencyUs += l->latencyUs;
  }
}

bool isNvEndpoint(const Node& n) { return n.kind == NodeKind::kGpu || n.kind == NodeKind::kNvSwitch; }

// NVLink bandwidth from a GPU into the NVSwitch fabric (all switches of a
// machine are one fabric, as NCCL treats them); 0 if it has none.
double fabricGBs(const Topology& t, int gpu) {
  if (t.nodes[gpu].kind == NodeKind::kNvSwitch) return kLocalGBs;
  double sum = 0;
  for (const Link& l : t.links) {
    if (l.kind != LinkKind::kNvLink || (l.a != gpu && l.b != gpu)) continue;
    int other = l.a == gpu ? l.b : l.a;
    if (t.nodes[other].kind == NodeKind::kNvSwitch) sum += l.bandwidthGBs;
  }
  return sum;
}

bool nvlinkPath(const Topology& t, int a, int b, Path* p) {
  if (!isNvEndpoint(t.nodes[a]) || !isNvEndpoint(t.nodes[b])) return false;
  if (const Link* l = findLink(t, a, b, LinkKind::kNvLink)) {
    *p = Path{PathClass::kNvl, l->bandwidthGBs, l->latencyUs};
    return true;
  }
  double fa = fabricGBs(t, a), fb = fabricGBs(t, b);
  if (fa > 0 && fb > 0) {
    *p = Path{PathClass::kNvl, std::min(fa, fb), 2 * kNvlLatencyUs};
    return true;
  }
  for (int c : t.gpus()) {
    const Link* l1 = findLink(t, a, c, LinkKind::kNvLink);
    const Link* l2 = findLink(t, c, b, LinkKind::kNvLink);
    if (c != a && c != b && l1 && l2) {
      *p = Path{PathClass::kNvb, std::min(l1->bandwidthGBs, l2->bandwidthGBs), l1->latencyUs + l2->latencyUs};
      return true;
    }
  }
  return false;
}

Path treePath(const Topology& t, int a, int b) {
  std::vector<int> ca = chainToRoot(t, a), cb = chainToRoot(t, b);
  Path p{PathClass::kSys, kLocalGBs, 0};
  int rootA = ca.back(), rootB = cb.back();
  bool sameRoot = rootA == rootB && t.nodes[rootA].kind == NodeKind::kCpu;
  if (!sameRoot) {
    crossUp(t, ca, ca.size() - 1, &p);
    crossUp(t, cb, cb.size() - 1, &p);
    const Node* cpuA = t.nodes[rootA].kind == NodeKind::kCpu ? &t.nodes[rootA] : nullptr;
    const Node* cpuB = t.nodes[rootB].kind == NodeKind::kCpu ? &t.nodes[rootB] : nullptr;
    double sys = std::min(cpuA ? interCpuGBs(*cpuA) : kLocalGBs, cpuB ? interCpuGBs(*cpuB) : kLocalGBs);
    p.bandwidthGBs = std::min(p.bandwidthGBs, sys);
    p.latencyUs += kSysLatencyUs;
    return p;
  }
  // Lowest common ancestor: the first node of a's chain that b's chain holds.
  size_t ia = 0, ib = 0;
  for (ia = 0; ia < ca.size(); ia++) {
    auto it = std::find(cb.begin(), cb.end(), ca[ia]);
    if (it != cb.end()) {
      ib = static_cast<size_t>(it - cb.begin());
      break;
    }
  }
  crossUp(t, ca, ia, &p);
  crossUp(t, cb, ib, &p);
  int lca = ca[ia];
  if (t.nodes[lca].kind == NodeKind::kCpu) {
    p.cls = PathClass::kPhb;
    return p;
  }
  // Switches crossed: those strictly between the two ends, the LCA included.
  int switches = 0;
  auto count = [&](const std::vector<int>& chain, size_t upto) {
    for (size_t i = 1; i < upto; i++) switches += t.nodes[chain[i]].kind == NodeKind::kPciSwitch;
  };
  count(ca, ia);
  count(cb, ib);
  if (lca != a && lca != b && t.nodes[lca].kind == NodeKind::kPciSwitch) switches++;
  p.cls = switches <= 1 ? PathClass::kPix : PathClass::kPxb;
  return p;
}

}  // namespace

const char* pathClassName(PathClass c) { return kNames[static_cast<int>(c)]; }

bool parsePathClass(const std::string& name, PathClass* out) {
  for (int i = 0; i < 8; i++) {
    if (name == kNames[i]) {
      *out = static_cast<PathClass>(i);
      return true;
    }
  }
  return false;
}

double nvlinkGBsPerLane(int sm) {
  if (sm >= 100) return 40.1;
  if (sm >= 90) return 20.6;
  if (sm >= 70) return 20.0;
  if (sm >= 60) return 18.0;
  return 20.0;
}

double interCpuGBs(const Node& cpu) {
  if (cpu.arch == "ppc64") return 32;
  if (cpu.vendor == "AuthenticAMD") return 16;
  if (cpu.vendor == "GenuineIntel") return cpu.modelId >= 0x55 ? 10 : 6;
  return 6;
}

Path path(const Topology& t, int a, int b) {
  if (a == b) return Path{PathClass::kLoc, kLocalGBs, 0};
  const Node& na = t.nodes[a];
  const Node& nb = t.nodes[b];
  // The two MLOPart partitions of one GPU share its memory system: NCCL
  // joins them with a local link (LOC, 2618 GB/s), not a trip through the fabric.
  if (na.kind == NodeKind::kGpu && nb.kind == NodeKind::kGpu && (na.partitionOf == b || nb.partitionOf == a))
    return Path{PathClass::kLoc, kMloPartGBs, 0};
  if (na.kind == NodeKind::kCpu && nb.kind == NodeKind::kCpu) {
    double bw = std::min(interCpuGBs(na), interCpuGBs(nb));
    return Path{PathClass::kSys, bw, kSysLatencyUs};
  }
  Path p;
  if (nvlinkPath(t, a, b, &p)) return p;
  return treePath(t, a, b);
}

int nearestNic(const Topology& t, int device) {
  int best = -1;
  std::tuple<int, int, double> bestKey;
  for (int nic : t.nics()) {
    Path p = path(t, device, nic);
    auto key = std::make_tuple(static_cast<int>(p.cls), t.nodes[nic].rdma ? 0 : 1, -p.bandwidthGBs);
    if (best < 0 || key < bestKey) {
      best = nic;
      bestKey = key;
    }
  }
  return best;
}

}  // namespace loom::topo

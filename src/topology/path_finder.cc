// Path classes between nodes of one topology, from an index built once
// (paths.h). The rules are NCCL's, as `nvidia-smi topo -m` shows them:
// NVLink (direct, through the NVSwitch fabric, or through one GPU) wins over
// the PCI tree; in the tree, the switches between the two ends decide.
#include <algorithm>
#include <tuple>
#include <utility>

#include "topology/paths.h"

namespace loom::topo {

namespace {

bool isNvEndpoint(const Node& n) {
  return n.kind == NodeKind::kGpu || n.kind == NodeKind::kNvSwitch;
}

}  // namespace

PathFinder::PathFinder(const Topology& t)
    : t_(t),
      nics_(t.nics()),
      uplink_(t.nodes.size(), nullptr),
      depth_(t.nodes.size(), 0),
      root_(t.nodes.size(), -1),
      sysGBs_(t.nodes.size(), kLocalGBs),
      fabricGBs_(t.nodes.size(), 0),
      nvlinkGpus_(t.nodes.size()),
      gpuOrder_(t.nodes.size(), -1),
      nvlinks_(t.nodes.size()) {
  std::vector<int> gpus = t.gpus();
  for (size_t i = 0; i < gpus.size(); i++) gpuOrder_[gpus[i]] = static_cast<int>(i);
  // Readers add a node after its parent, so one pass in id order gives
  // every depth and root; a parent added later (not done today) is climbed.
  for (const Node& n : t.nodes) {
    if (n.parent >= 0 && n.parent < n.id) {
      depth_[n.id] = depth_[n.parent] + 1;
      root_[n.id] = root_[n.parent];
      continue;
    }
    int top = n.id, d = 0;
    for (; t.nodes[top].parent >= 0; top = t.nodes[top].parent) d++;
    depth_[n.id] = d;
    root_[n.id] = top;
  }
  // The socket interconnect as a tree's root sees it; a root that is no CPU
  // (an NVSwitch outside the PCI tree) does not limit it.
  for (const Node& n : t.nodes) sysGBs_[n.id] = n.kind == NodeKind::kCpu ? interCpuGBs(n) : kLocalGBs;
  // Where a file gives two links between the same ends, the first counts.
  for (const Link& l : t.links) {
    if (l.kind == LinkKind::kPci) {
      for (auto [child, parent] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
        if (t.nodes[child].parent == parent && uplink_[child] == nullptr) uplink_[child] = &l;
      }
      continue;
    }
    if (l.kind != LinkKind::kNvLink) continue;
    // Every link to a switch adds to the fabric bandwidth, in link order.
    for (auto [end, other] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
      if (t.nodes[other].kind == NodeKind::kNvSwitch && end != other) fabricGBs_[end] += l.bandwidthGBs;
    }
    if (l.a == l.b) continue;
    nvlinks_[l.a].push_back({l.b, &l});
    nvlinks_[l.b].push_back({l.a, &l});
  }
  // By peer, the first link of each pair only (stable: links stay in file order).
  for (auto& peers : nvlinks_) {
    std::stable_sort(peers.begin(), peers.end(), [](const Peer& x, const Peer& y) { return x.node < y.node; });
    peers.erase(std::unique(peers.begin(), peers.end(), [](const Peer& x, const Peer& y) { return x.node == y.node; }),
                peers.end());
  }
  for (const Node& n : t.nodes) {
    for (const Peer& p : nvlinks_[n.id]) {
      if (t.nodes[p.node].kind == NodeKind::kGpu) nvlinkGpus_[n.id].push_back(p.node);
    }
  }
  for (const Node& n : t.nodes) {
    if (n.kind == NodeKind::kNvSwitch) fabricGBs_[n.id] = kLocalGBs;
  }
}

const Link* PathFinder::nvlinkBetween(int a, int b) const {
  const std::vector<Peer>& peers = nvlinks_[a].size() <= nvlinks_[b].size() ? nvlinks_[a] : nvlinks_[b];
  const int other = &peers == &nvlinks_[a] ? b : a;
  auto it = std::lower_bound(peers.begin(), peers.end(), other, [](const Peer& p, int node) { return p.node < node; });
  return it != peers.end() && it->node == other ? it->link : nullptr;
}

// The PCI links from `from` up `hops` levels, bandwidth and latency summed
// in that order (the latency is a floating-point sum: the order is part of
// the answer).
void PathFinder::crossUp(int from, int hops, Path* p) const {
  for (int n = from; hops > 0; n = t_.nodes[n].parent, hops--) {
    const Link* l = uplink_[n];
    if (l == nullptr) continue;
    p->bandwidthGBs = std::min(p->bandwidthGBs, l->bandwidthGBs);
    p->latencyUs += l->latencyUs;
  }
}

bool PathFinder::nvlinkPath(int a, int b, Path* p) const {
  if (!isNvEndpoint(t_.nodes[a]) || !isNvEndpoint(t_.nodes[b])) return false;
  if (const Link* l = nvlinkBetween(a, b)) {
    *p = Path{PathClass::kNvl, l->bandwidthGBs, l->latencyUs};
    return true;
  }
  // All NVSwitches of a machine are one fabric, as NCCL treats them.
  double fa = fabricGBs_[a], fb = fabricGBs_[b];
  if (fa > 0 && fb > 0) {
    *p = Path{PathClass::kNvl, std::min(fa, fb), 2 * kNvlLatencyUs};
    return true;
  }
  // NVB: through the first GPU (in CUDA order) that both reach by NVLink.
  // The peers of the end with fewer are enough to find it.
  int from = nvlinkGpus_[a].size() <= nvlinkGpus_[b].size() ? a : b, to = from == a ? b : a;
  int via = -1;
  for (int c : nvlinkGpus_[from]) {
    if (c == to || nvlinkBetween(c, to) == nullptr) continue;
    if (via < 0 || gpuOrder_[c] < gpuOrder_[via]) via = c;
  }
  if (via < 0) return false;
  const Link* l1 = nvlinkBetween(a, via);
  const Link* l2 = nvlinkBetween(via, b);
  *p = Path{PathClass::kNvb, std::min(l1->bandwidthGBs, l2->bandwidthGBs), l1->latencyUs + l2->latencyUs};
  return true;
}

Path PathFinder::treePath(int a, int b) const {
  Path p{PathClass::kSys, kLocalGBs, 0};
  const int rootA = root_[a], rootB = root_[b];
  bool sameRoot = rootA == rootB && t_.nodes[rootA].kind == NodeKind::kCpu;
  if (!sameRoot) {
    crossUp(a, depth_[a], &p);
    crossUp(b, depth_[b], &p);
    p.bandwidthGBs = std::min({p.bandwidthGBs, sysGBs_[rootA], sysGBs_[rootB]});
    p.latencyUs += kSysLatencyUs;
    return p;
  }
  // Lowest common ancestor: climb the deeper end to the other's depth, then both.
  int x = a, y = b;
  while (depth_[x] > depth_[y]) x = t_.nodes[x].parent;
  while (depth_[y] > depth_[x]) y = t_.nodes[y].parent;
  while (x != y) x = t_.nodes[x].parent, y = t_.nodes[y].parent;
  const int lca = x;
  const int hopsA = depth_[a] - depth_[lca], hopsB = depth_[b] - depth_[lca];
  crossUp(a, hopsA, &p);
  crossUp(b, hopsB, &p);
  if (t_.nodes[lca].kind == NodeKind::kCpu) {
    p.cls = PathClass::kPhb;
    return p;
  }
  // Switches crossed: those strictly between the two ends, the LCA included.
  int switches = 0;
  for (auto [from, hops] : {std::pair{a, hopsA}, std::pair{b, hopsB}}) {
    int n = from;
    for (int i = 1; i < hops; i++) {
      n = t_.nodes[n].parent;
      switches += t_.nodes[n].kind == NodeKind::kPciSwitch;
    }
  }
  if (lca != a && lca != b && t_.nodes[lca].kind == NodeKind::kPciSwitch) switches++;
  p.cls = switches <= 1 ? PathClass::kPix : PathClass::kPxb;
  return p;
}

Path PathFinder::path(int a, int b) const {
  if (a == b) return Path{PathClass::kLoc, kLocalGBs, 0};
  const Node& na = t_.nodes[a];
  const Node& nb = t_.nodes[b];
  // The two MLOPart partitions of one GPU share its memory system: NCCL
  // joins them with a local link (LOC, 2618 GB/s), not a trip through the fabric.
  if (na.kind == NodeKind::kGpu && nb.kind == NodeKind::kGpu && (na.partitionOf == b || nb.partitionOf == a))
    return Path{PathClass::kLoc, kMloPartGBs, 0};
  if (na.kind == NodeKind::kCpu && nb.kind == NodeKind::kCpu) {
    double bw = std::min(interCpuGBs(na), interCpuGBs(nb));
    return Path{PathClass::kSys, bw, kSysLatencyUs};
  }
  Path p;
  if (nvlinkPath(a, b, &p)) return p;
  return treePath(a, b);
}

int PathFinder::nearestNic(int device) const {
  int best = -1;
  std::tuple<int, int, double> bestKey;
  for (int nic : nics_) {
    Path p = path(device, nic);
    auto key = std::make_tuple(static_cast<int>(p.cls), t_.nodes[nic].rdma ? 0 : 1, -p.bandwidthGBs);
    if (best < 0 || key < bestKey) {
      best = nic;
      bestKey = key;
    }
  }
  return best;
}

Path path(const Topology& t, int a, int b) {
  return PathFinder(t).path(a, b);
}

int nearestNic(const Topology& t, int device) {
  return PathFinder(t).nearestNic(device);
}

}  // namespace loom::topo

// The path-class matrix (as `nvidia-smi topo -m` prints it) and the rings
// Loom would build for a simulated launch.
#include <cstdio>
#include <cstring>

#include "collectives/binomial.h"
#include "loom_topo/report.h"
#include "topology/paths.h"
#include "topology/placement.h"

namespace loom::topo {

namespace {

std::string label(const Topology& t, int id) {
  const Node& n = t.nodes[id];
  return n.kind == NodeKind::kCpu ? cat("NUMA", n.numa) : n.name;
}

// padded(s, width), appended to `out` without a string of its own.
void appendPadded(std::string& out, const char* s, size_t width) {
  size_t length = std::strlen(s);
  out.append(s, length);
  out.append(length >= width ? 1 : width - length, ' ');
}

void printLegend(std::ostream& os) {
  os << "\nLegend:\n"
        "  X   = self\n"
        "  NVL = NVLink, directly or through the NVSwitch fabric\n"
        "  NVB = NVLink through an intermediate GPU\n"
        "  PIX = at most one PCIe switch\n"
        "  PXB = several PCIe switches, not the host bridge\n"
        "  PHB = PCIe and the host bridge of one NUMA node\n"
        "  SYS = across the interconnect between NUMA nodes or sockets\n";
}

std::string ringString(const std::vector<int>& ring) {
  std::string s;
  for (int r : ring) s += cat(s.empty() ? "" : " ", r);
  return s;
}

std::string crossingString(const RingCrossings& c) {
  return cat("crosses hosts ", c.hosts, "x, sockets ", c.packages, "x, NUMA nodes ", c.numas, "x");
}

}  // namespace

std::string padded(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

std::vector<int> matrixNodes(const Topology& t) {
  std::vector<int> ids = t.gpus();
  for (int n : t.nics()) ids.push_back(n);
  for (int c : t.cpuNodes()) ids.push_back(c);
  return ids;
}

void printMatrix(std::ostream& os, const Topology& t) {
  std::vector<int> ids = matrixNodes(t);
  size_t width = 6;
  for (int id : ids) width = std::max(width, label(t, id).size() + 1);
  os << padded("", width);
  for (int id : ids) os << padded(label(t, id), width);
  os << "\n";
  // One string per row: a 1000-GPU machine has over a million cells, and a
  // stream write per cell was a third of the report's time.
  const PathFinder paths(t);
  std::string row;
  for (int a : ids) {
    row = padded(label(t, a), width);
    for (int b : ids) appendPadded(row, a == b ? "X" : pathClassName(paths.path(a, b).cls), width);
    os << row << "\n";
  }
  if (!t.gpus().empty()) {
    os << "\n" << padded("GPU", width) << padded("CPU Affinity", 16) << padded("NUMA", 6) << "Nearest NIC\n";
    for (int g : t.gpus()) {
      int cpu = t.rootCpu(g);
      int nic = paths.nearestNic(g);
      Path p = nic < 0 ? Path{} : paths.path(g, nic);
      std::string near =
          nic < 0 ? "none" : cat(t.nodes[nic].name, " (", pathClassName(p.cls), ", ", gbsString(p.bandwidthGBs), ")");
      os << padded(label(t, g), width) << padded(cpu >= 0 ? cpuListString(t.nodes[cpu].cpus) : "?", 16)
         << padded(cpu >= 0 ? std::to_string(t.nodes[cpu].numa) : "?", 6) << near << "\n";
    }
  }
  printLegend(os);
}

namespace {

// "0 -> 2 1; 2 -> 3": each parent and its children, the binomial tree of
// collectives/binomial.h over the ring, rooted at rank 0 (one of the trees
// Broadcast and Reduce weigh; --plan prints which runs).
std::string treeString(const std::vector<int>& ring) {
  const int n = static_cast<int>(ring.size());
  int rootPosition = 0;
  while (rootPosition < n && ring[rootPosition] != 0) ++rootPosition;
  auto rankAt = [&](int index) { return ring[(rootPosition + index) % n]; };
  std::string text;
  for (int i = 0; i < n; ++i) {
    const BinomialLinks links = binomialLinks(n, i);
    if (links.childCount == 0) continue;
    if (!text.empty()) text += "; ";
    text += std::to_string(rankAt(i));
    text += " ->";
    for (int c = 0; c < links.childCount; ++c) {
      text += ' ';
      text += std::to_string(rankAt(links.children[c]));
    }
  }
  return text.empty() ? "(one rank)" : text;
}

}  // namespace

void printRings(std::ostream& os, const Topology& t, const std::vector<int>& ranksPerHost, const std::string& mapBy) {
  const std::vector<RankPlacement> placed = simulateHosts(t, ranksPerHost, mapBy);
  const int ranks = static_cast<int>(placed.size());
  const bool manyHosts = ranksPerHost.size() > 1;
  os << ranks << " ranks";
  if (manyHosts) os << " on " << ranksPerHost.size() << " hosts like this one";
  os << ", --map-by " << mapBy << ":\n";
  for (int r = 0; r < ranks; r++) {
    const RankPlacement& p = placed[static_cast<size_t>(r)];
    os << "  rank " << r << ": ";
    if (manyHosts) os << p.host << ", ";
    os << "CPU " << p.firstCpu << ", socket " << p.package << ", NUMA " << p.numa;
    if (p.nic[0]) os << ", nearest NIC " << p.nic;
    os << "\n";
  }
  std::vector<int> identity;
  for (int r = 0; r < ranks; r++) identity.push_back(r);
  std::vector<int> ring = ringOrder(placed);
  os << "  rank order: " << ringString(identity) << "  (" << crossingString(countCrossings(placed, identity)) << ")\n";
  os << "  Loom ring:  " << ringString(ring) << "  (" << crossingString(countCrossings(placed, ring)) << ")\n";
  os << "  Loom tree:  " << treeString(ring) << "  (root 0; binomial: one of the trees Broadcast and Reduce weigh)\n";
}

}  // namespace loom::topo

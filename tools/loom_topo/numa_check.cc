#include "loom_topo/numa_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "loom_topo/numa_measure.h"
#include "loom_topo/report.h"
#include "topology/nccl_xml.h"

namespace loom::topo {

namespace {

constexpr double kTolerance = 0.30;

// One CPU per core of a NUMA node that this process may run on.
std::vector<int> coresOf(const Topology& t, const Node& cpu, const std::set<int>& allowed, int max) {
  std::vector<int> out;
  std::set<std::pair<int, int>> seen;
  for (const Pu& pu : t.pus) {
    if (pu.numa != cpu.numa || !allowed.count(pu.os) || !seen.insert({pu.package, pu.core}).second) continue;
    if (static_cast<int>(out.size()) < max) out.push_back(pu.os);
  }
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

bool near(double value, double reference) { return std::fabs(value / reference - 1) <= kTolerance; }

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

struct NodeMeasure {
  int id;
  std::vector<int> cores;
};

// Cores of one NUMA node measured against its first core: a core far slower
// than the others means the node spans sockets (or CCXs) it does not show.
int checkInsideNode(const Topology& t, const NodeMeasure& m, const CheckOptions& o, std::ostream& os) {
  const Node& node = t.nodes[m.id];
  if (m.cores.size() < 2) {
    os << "  NUMA " << node.numa << ": one usable core, no core-to-core pair to measure\n";
    return 0;
  }
  std::vector<double> lat;
  for (size_t i = 1; i < m.cores.size(); i++) {
    lat.push_back(detail::measurePingPong(m.cores[0], m.cores[i], o.pingPongRounds));
    os << "  core-to-core CPU " << m.cores[0] << " <-> CPU " << m.cores[i] << " (LOC, NUMA " << node.numa
       << "): " << fixed(lat.back(), 0) << " ns\n";
  }
  double best = *std::min_element(lat.begin(), lat.end());
  std::vector<int> nearCpus{m.cores[0]}, farCpus;
  for (size_t i = 1; i < m.cores.size(); i++) (near(lat[i - 1], best) ? nearCpus : farCpus).push_back(m.cores[i]);
  if (farCpus.empty()) return 0;
  os << "  FLAG: NUMA " << node.numa << " is one node (LOC) but CPUs " << cpuListString(farCpus) << " answer CPU "
     << m.cores[0] << " more than 30% slower than CPUs " << cpuListString(nearCpus)
     << ": they look like another socket.\n"
     << "    suggested fix: dump with `loom-topo --xml > topo.xml`, split <cpu numaid=\"" << node.numa
     << "\"> into one <cpu> per group (affinity=\"" << formatAffinity(nearCpus, 1 + nearCpus.back() / 32)
     << "\" with package=\"0\", affinity=\"" << formatAffinity(farCpus, 1 + farCpus.back() / 32)
     << "\" with package=\"1\"), then export LOOM_TOPO_FILE=topo.xml\n";
  return 1;
}

struct PairResult {
  int a, b;  // CPU node ids
  detail::MemoryResult mem;
  double pingNs;
};

int checkAcrossNodes(const Topology& t, const std::vector<PairResult>& pairs, const std::vector<PairResult>& local,
                     std::ostream& os) {
  std::vector<double> bw, lat;
  for (const PairResult& p : local) {
    bw.push_back(p.mem.bandwidthGBs);
    lat.push_back(p.mem.latencyNs);
  }
  double localBw = median(bw), localLat = median(lat);
  int findings = 0;
  for (const PairResult& p : pairs) {
    const Node& a = t.nodes[p.a];
    const Node& b = t.nodes[p.b];
    const char* cls = a.package == b.package ? "SYS, same socket" : "SYS";
    os << "  NUMA " << a.numa << " -> memory of NUMA " << b.numa << " (" << cls << "): " << fixed(p.mem.bandwidthGBs, 1)
       << " GB/s, " << fixed(p.mem.latencyNs, 0) << " ns";
    if (p.pingNs > 0) os << "; core-to-core " << fixed(p.pingNs, 0) << " ns";
    os << "\n";
    if (near(p.mem.bandwidthGBs, localBw) && near(p.mem.latencyNs, localLat)) {
      findings++;
      os << "  FLAG: NUMA " << a.numa << " and " << b.numa << " are detected as SYS but measure like one node ("
         << fixed(localBw, 1) << " GB/s, " << fixed(localLat, 0) << " ns local).\n"
         << "    suggested fix: dump with `loom-topo --xml > topo.xml`, merge the two <cpu> elements into one with "
            "affinity=\""
         <<
          [&] {
            std::vector<int> all = a.cpus;
            all.insert(all.end(), b.cpus.begin(), b.cpus.end());
            return formatAffinity(all, 1 + *std::max_element(all.begin(), all.end()) / 32);
          }()
         << "\" (keeping both nodes' <pci> children), then export LOOM_TOPO_FILE=topo.xml\n";
    }
  }
  return findings;
}

}  // namespace

int runNumaCheck(const Topology& t, std::ostream& os, const CheckOptions& o) {
  std::set<int> allowed = detail::allowedCpus();
  std::vector<NodeMeasure> nodes;
  for (int c : t.cpuNodes()) {
    NodeMeasure m{c, coresOf(t, t.nodes[c], allowed, o.maxCoresPerNode)};
    if (!m.cores.empty()) nodes.push_back(m);
  }
  if (nodes.empty()) {
    os << "check: none of this process's CPUs belongs to the topology's NUMA nodes (is it another machine's file?)\n";
    return 0;
  }
  if (nodes.size() == 1) {
    os << "check: this machine has one NUMA node (as far as this process may run): nothing crosses a NUMA node or "
          "socket; measuring inside the node.\n";
  }
  int findings = 0;
  std::vector<PairResult> local, remote;
  for (const NodeMeasure& m : nodes) {
    int cpu = m.cores[0];
    local.push_back({m.id, m.id, detail::measureMemory(cpu, cpu, o.bufferBytes), 0});
    os << "  NUMA " << t.nodes[m.id].numa << " local memory (LOC): " << fixed(local.back().mem.bandwidthGBs, 1)
       << " GB/s, " << fixed(local.back().mem.latencyNs, 0) << " ns\n";
    findings += checkInsideNode(t, m, o, os);
  }
  // All pairs on small machines; from the first node only on large ones.
  for (size_t i = 0; i < nodes.size(); i++) {
    for (size_t j = 0; j < nodes.size(); j++) {
      if (i == j || (nodes.size() > 8 && i != 0 && j != 0)) continue;
      int ca = nodes[i].cores[0], cb = nodes[j].cores[0];
      double ping = i < j ? detail::measurePingPong(ca, cb, o.pingPongRounds) : 0;
      remote.push_back({nodes[i].id, nodes[j].id, detail::measureMemory(ca, cb, o.bufferBytes), ping});
    }
  }
  findings += checkAcrossNodes(t, remote, local, os);
  os << "check: " << findings << (findings == 1 ? " finding" : " findings")
     << (findings ? "" : ": the measurements agree with the detected topology") << "\n";
  return findings;
}

}  // namespace loom::topo

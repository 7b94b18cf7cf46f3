// A rank's placement: its CPU binding, and the socket, NUMA node and NIC
// that binding implies on the topology.
#include "topology/placement.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "base/error.h"
#include "topology/paths.h"

namespace loom::topo {

namespace {

constexpr int kMaskCpus = 16 * 64;

// The one value every CPU of the binding shares, or -1.
template <typename Field>
int32_t common(const Topology& t, const std::vector<int>& cpus, Field field) {
  std::set<int> values;
  for (int c : cpus) {
    const Pu* pu = t.findPu(c);
    values.insert(pu ? field(*pu) : -1);
  }
  return values.size() == 1 ? *values.begin() : -1;
}

RankPlacement placementOf(const Topology& t, const PathFinder& paths, const std::vector<int>& cpus,
                          const std::string& host) {
  RankPlacement p;
  std::memset(&p, 0, sizeof(p));
  std::strncpy(p.host, host.c_str(), sizeof(p.host) - 1);
  for (int c : cpus) {
    if (c >= 0 && c < kMaskCpus) p.cpuMask[c / 64] |= uint64_t{1} << (c % 64);
  }
  p.cpuCount = static_cast<int32_t>(cpus.size());
  p.firstCpu = cpus.empty() ? -1 : *std::min_element(cpus.begin(), cpus.end());
  p.package = common(t, cpus, [](const Pu& pu) { return pu.package; });
  p.numa = common(t, cpus, [](const Pu& pu) { return pu.numa; });
  int cpuNode = t.cpuNodeOfNuma(p.numa);
  int nic = cpuNode >= 0 ? paths.nearestNic(cpuNode) : -1;
  if (nic >= 0) std::strncpy(p.nic, t.nodes[nic].name.c_str(), sizeof(p.nic) - 1);
  return p;
}

std::string thisHost() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  return host;
}

// A slot a rank can be bound to: the first PU of a core.
struct Slot {
  int cpu, package, numa;
};

std::vector<Slot> coreSlots(const Topology& t) {
  std::vector<Slot> slots;
  std::set<std::pair<int, int>> seen;  // (package, core)
  for (const Pu& pu : t.pus) {
    if (seen.insert({pu.package, pu.core}).second) slots.push_back({pu.os, pu.package, pu.numa});
  }
  if (slots.empty()) {  // a file without CPU sets: one slot per NUMA node
    for (int c : t.cpuNodes()) slots.push_back({-1, t.nodes[c].package, t.nodes[c].numa});
  }
  return slots;
}

}  // namespace

RankPlacement ownPlacement(const Topology& topology) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) failSystem("sched_getaffinity", errno);
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return placementOf(topology, PathFinder(topology), cpus, thisHost());
}

RankPlacement placementOfCpu(const Topology& topology, int cpu, const std::string& host) {
  return placementOfCpu(topology, PathFinder(topology), cpu, host);
}

RankPlacement placementOfCpu(const Topology& topology, const PathFinder& paths, int cpu, const std::string& host) {
  return placementOf(topology, paths, cpu >= 0 ? std::vector<int>{cpu} : std::vector<int>{}, host);
}

HostCrowding mostCrowdedHost(const std::vector<RankPlacement>& ranks) {
  struct Host {
    uint64_t cpus[kMaskCpus / 64] = {};
    int boundRanks = 0;
    std::set<int> sockets;
  };
  std::map<std::string, Host> hosts;
  for (const RankPlacement& p : ranks) {
    Host& host = hosts[std::string(p.host, strnlen(p.host, sizeof(p.host)))];
    bool bound = false;
    for (int word = 0; word < kMaskCpus / 64; ++word) {
      host.cpus[word] |= p.cpuMask[word];
      bound = bound || p.cpuMask[word] != 0;
    }
    host.boundRanks += bound ? 1 : 0;
    if (p.package >= 0) host.sockets.insert(p.package);
  }
  HostCrowding most;
  for (const auto& [name, host] : hosts) {
    int cpus = 0;
    for (uint64_t word : host.cpus) cpus += __builtin_popcountll(word);
    if (cpus > 0) {
      most.ranksPerCpu = std::max(most.ranksPerCpu, static_cast<double>(host.boundRanks) / cpus);
      most.fewestCpus = most.fewestCpus == 0 ? cpus : std::min(most.fewestCpus, cpus);
    }
    most.sockets = std::max(most.sockets, static_cast<int>(host.sockets.size()));
  }
  return most;
}

std::vector<RankPlacement> simulatePlacements(const Topology& topology, int n, const std::string& mapBy) {
  if (mapBy != "core" && mapBy != "socket" && mapBy != "numa") {
    fail(loomInvalidArgument, "--map-by " + mapBy + " is not one of core, socket, numa");
  }
  std::vector<Slot> slots = coreSlots(topology);
  // Buckets of slots: all in one (core), or per socket / NUMA node in id order.
  std::map<int, std::vector<Slot>> buckets;
  for (const Slot& s : slots) buckets[mapBy == "core" ? 0 : mapBy == "socket" ? s.package : s.numa].push_back(s);
  std::vector<std::vector<Slot>*> order;
  for (auto& [key, list] : buckets) order.push_back(&list);
  std::vector<size_t> next(order.size(), 0);
  std::string host = topology.hostname.empty() ? "localhost" : topology.hostname;
  const PathFinder paths(topology);
  std::vector<RankPlacement> out;
  for (int r = 0; r < n; r++) {
    size_t b = static_cast<size_t>(r) % order.size();
    const Slot& s = (*order[b])[next[b]++ % order[b]->size()];
    RankPlacement p = placementOfCpu(topology, paths, s.cpu, host);
    if (s.cpu < 0) {  // no CPU to look up: take the slot's own location
      p.package = s.package;
      p.numa = s.numa;
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace loom::topo

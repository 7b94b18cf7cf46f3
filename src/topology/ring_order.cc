// Ring order from placements: keep every host, socket and NUMA node
// contiguous so the ring crosses each slow boundary the fewest times,
// whatever order a launcher numbered the ranks in.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "topology/placement.h"

namespace loom::topo {

namespace {

std::string hostOf(const RankPlacement& p) { return std::string(p.host, strnlen(p.host, sizeof(p.host))); }

// Usually a socket holds NUMA nodes; on glued machines (IBM x3950) a NUMA
// node holds sockets. The coarser of the two must be the outer group.
bool packagesInsideNuma(const std::vector<RankPlacement>& ranks, const std::string& host) {
  std::map<int, std::set<int>> numasOfPackage, packagesOfNuma;
  for (const RankPlacement& r : ranks) {
    if (hostOf(r) != host) continue;
    numasOfPackage[r.package].insert(r.numa);
    packagesOfNuma[r.numa].insert(r.package);
  }
  bool everyPackageInOneNuma = std::all_of(numasOfPackage.begin(), numasOfPackage.end(),
                                           [](const auto& kv) { return kv.second.size() == 1; });
  bool someNumaHoldsSeveral = std::any_of(packagesOfNuma.begin(), packagesOfNuma.end(),
                                          [](const auto& kv) { return kv.second.size() > 1; });
  return everyPackageInOneNuma && someNumaHoldsSeveral;
}

// For each rank, the lowest rank sharing its key: groups sort by their first
// member, so the group holding rank 0 comes first and rank order is kept.
template <typename Key>
std::vector<int> firstRankOf(const std::vector<RankPlacement>& ranks, Key key) {
  std::map<decltype(key(ranks[0])), int> first;
  std::vector<int> out(ranks.size());
  for (size_t r = 0; r < ranks.size(); r++) {
    auto [it, fresh] = first.emplace(key(ranks[r]), static_cast<int>(r));
    out[r] = it->second;
  }
  return out;
}

}  // namespace

std::vector<int> ringOrder(const std::vector<RankPlacement>& ranks) {
  std::vector<int> order(ranks.size());
  for (size_t r = 0; r < ranks.size(); r++) order[r] = static_cast<int>(r);
  if (ranks.empty()) return order;
  std::map<std::string, bool> numaOuter;
  for (const RankPlacement& r : ranks) numaOuter.emplace(hostOf(r), false);
  for (auto& [host, outer] : numaOuter) outer = packagesInsideNuma(ranks, host);

  auto outerOf = [&](const RankPlacement& p) { return numaOuter[hostOf(p)] ? p.numa : p.package; };
  auto innerOf = [&](const RankPlacement& p) { return numaOuter[hostOf(p)] ? p.package : p.numa; };
  std::vector<int> hostKey = firstRankOf(ranks, [&](const RankPlacement& p) { return hostOf(p); });
  std::vector<int> outerKey = firstRankOf(ranks, [&](const RankPlacement& p) { return std::make_tuple(hostOf(p), outerOf(p)); });
  std::vector<int> innerKey =
      firstRankOf(ranks, [&](const RankPlacement& p) { return std::make_tuple(hostOf(p), outerOf(p), innerOf(p)); });
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return std::tie(hostKey[a], outerKey[a], innerKey[a], a) < std::tie(hostKey[b], outerKey[b], innerKey[b], b);
  });
  return order;
}

RingCrossings countCrossings(const std::vector<RankPlacement>& ranks, const std::vector<int>& ring) {
  RingCrossings c;
  if (ring.size() < 2) return c;
  for (size_t i = 0; i < ring.size(); i++) {
    const RankPlacement& a = ranks[ring[i]];
    const RankPlacement& b = ranks[ring[(i + 1) % ring.size()]];
    Locality l = locality(a, b);
    c.hosts += l == Locality::kOtherHost;
    c.packages += l == Locality::kSameHost;
    c.numas += l == Locality::kSameSocket;
  }
  return c;
}

Locality locality(const RankPlacement& a, const RankPlacement& b) {
  if (hostOf(a) != hostOf(b)) return Locality::kOtherHost;
  if (a.package != b.package) return Locality::kSameHost;
  if (a.numa != b.numa) return Locality::kSameSocket;
  return Locality::kSameNuma;
}

const char* localityName(Locality l) {
  switch (l) {
    case Locality::kSameNuma: return "same NUMA node";
    case Locality::kSameSocket: return "same socket";
    case Locality::kSameHost: return "same host";
    case Locality::kOtherHost: return "other host";
  }
  return "?";
}

}  // namespace loom::topo

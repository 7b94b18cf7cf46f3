// Which transport the registry picks for each pair of ranks of a simulated
// launch: the same choice (transport/registry.h) every rank makes at init
// from the ranks' identities, so a layout can be checked before a job runs.
#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "base/rank_list.h"
#include "collectives/hierarchical.h"
#include "collectives/plan.h"
#include "loom_topo/report.h"
#include "transport/identity.h"
#include "transport/registry.h"

namespace loom::topo {

namespace {

// The matrix is for reading; beyond this many ranks only host pairs print.
constexpr int kMatrixRanks = 16;

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// Whether AllReduce, AllGather and ReduceScatter may run in steps on this
// layout (collectives/hierarchical.h), as plan.cc weighs them; across hosts
// there are no single-copy reads.
void printAllReduceShape(std::ostream& os, const std::vector<int>& hostOf) {
  Team team;
  team.nranks = static_cast<int>(hostOf.size());
  std::vector<int> seen(hostOf.empty() ? 0 : *std::max_element(hostOf.begin(), hostOf.end()) + 1, 0);
  for (int host : hostOf) {
    team.members.push_back(static_cast<int>(team.places.size()));
    team.places.push_back(MemberPlace{host, seen[host]++, -1, -1});
  }
  team.hosts = hostsOf(team);
  const std::string hosts = describeHosts(team);
  PlanInputs in;
  in.shape = {team.nranks, team.hosts, *std::max_element(seen.begin(), seen.end())};
  in.fewestRanksOnAHost = *std::min_element(seen.begin(), seen.end());
  if (hierarchicalFits(team) && blocksInFewRounds(in)) {
    os << "  AllReduce, AllGather, ReduceScatter: within and across hosts in steps where the cost model finds it "
          "cheaper ("
       << hosts << "; --plan shows where)\n";
  } else if (hierarchicalFits(team)) {
    os << "  AllReduce: within and across hosts in steps where the cost model finds it cheaper (" << hosts
       << "; --plan shows where)\n"
       << "  AllGather, ReduceScatter: flat schedules (" << hosts
       << "; in steps a larger host's further blocks would take more than two rounds; LOOM_ALGO=hierarchical "
          "asks for them)\n";
  } else {
    os << "  AllReduce, AllGather, ReduceScatter: flat schedules (" << hosts
       << "; steps within and across hosts need several hosts, one with two ranks or more)\n";
  }
}

}  // namespace

std::vector<RankIdentity> simulatedIdentities(const std::vector<int>& ranksPerHost) {
  std::vector<RankIdentity> identities;
  for (size_t host = 0; host < ranksPerHost.size(); ++host) {
    for (int i = 0; i < ranksPerHost[host]; ++i) {
      RankIdentity identity;
      identity.host = cat("host", host);
      identity.pid = static_cast<pid_t>(1000 + identities.size());
      identities.push_back(identity);
    }
  }
  return identities;
}

void printTransports(std::ostream& os, const std::vector<int>& ranksPerHost, const std::string& transports) {
  const std::vector<RankIdentity> identities = simulatedIdentities(ranksPerHost);
  std::vector<int> hostOf;
  for (size_t host = 0; host < ranksPerHost.size(); ++host)
    hostOf.insert(hostOf.end(), ranksPerHost[host], static_cast<int>(host));
  const int ranks = static_cast<int>(identities.size());
  os << ranks << " ranks on " << ranksPerHost.size() << (ranksPerHost.size() == 1 ? " host" : " hosts")
     << ", LOOM_TRANSPORTS=" << (transports.empty() ? "(unset: every transport)" : transports) << ":\n";
  const TransportFilter filter = parseTransportFilter(transports, "LOOM_TRANSPORTS");
  // chosen[r][p]: the kind that connects rank r to rank p. Both ends choose
  // alike, so one row per host's first rank would do; every row is cheap.
  std::vector<std::vector<int>> chosen(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    try {
      chosen[r] = chooseTransports(identities, r, filter);
    } catch (const Error& e) {
      os << "  none: " << e.what() << "\n";
      return;
    }
  }
  const std::vector<TransportKind>& kinds = transportKinds();
  auto kindName = [&](int r, int p) { return r == p ? std::string("-") : upper(kinds[chosen[r][p]].name); };

  // Host by host: the pairs inside each, then each pair of hosts.
  std::vector<int> firstRank(ranksPerHost.size(), 0);
  for (size_t host = 1; host < ranksPerHost.size(); ++host)
    firstRank[host] = firstRank[host - 1] + ranksPerHost[host - 1];
  for (size_t a = 0; a < ranksPerHost.size(); ++a) {
    std::vector<int> members;
    for (int i = 0; i < ranksPerHost[a]; ++i) members.push_back(firstRank[a] + i);
    os << "  within host" << a << " (" << describeRanks(members)
       << "): " << (members.size() < 2 ? std::string("no pairs") : kindName(members[0], members[1])) << "\n";
  }
  for (size_t a = 0; a < ranksPerHost.size(); ++a)
    for (size_t b = a + 1; b < ranksPerHost.size(); ++b)
      os << "  host" << a << " <-> host" << b << ": " << kindName(firstRank[a], firstRank[b]) << "\n";
  if (ranksPerHost.size() > 1) printAllReduceShape(os, hostOf);

  if (ranks < 2 || ranks > kMatrixRanks) return;
  std::string line = "        ";
  for (int p = 0; p < ranks; ++p) line += padded(std::to_string(p), 5);
  while (line.back() == ' ') line.pop_back();
  os << line << "\n";
  for (int r = 0; r < ranks; ++r) {
    line = "  " + padded(std::to_string(r), 6);
    for (int p = 0; p < ranks; ++p) line += padded(kindName(r, p), 5);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    os << line << "\n";
  }
}

}  // namespace loom::topo

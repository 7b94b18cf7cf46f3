#include "simulate/in_process_team.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "base/error.h"
#include "collectives/hierarchical.h"
#include "transport/registry.h"

namespace loom::simulate {

int inMemoryKind() {
  const std::vector<TransportKind>& kinds = transportKinds();
  for (size_t k = 0; k < kinds.size(); ++k)
    if (std::string(kinds[k].name) == "mem") return static_cast<int>(k);
  fail(loomInternalError, "this Loom has no in-memory transport kind");
}

CollectiveCall inProcessCall(uint64_t number, OperationKind kind, const CollectiveArgs& args) {
  const bool reduces =
      kind == OperationKind::kAllReduce || kind == OperationKind::kReduceScatter || kind == OperationKind::kReduce;
  const bool rooted = kind == OperationKind::kBroadcast || kind == OperationKind::kReduce;
  return {number, kind, args.count, static_cast<int32_t>(args.dtype), reduces ? args.op : -1, rooted ? args.root : -1};
}

Team inProcessTeam(int rank, int nranks, const std::vector<int>& hostOf, const std::vector<int>& ring,
                   Connections* connections, PointToPointInboxes* inboxes, const Tuning& tuning) {
  Team team;
  team.rank = rank;
  team.nranks = nranks;
  team.members.resize(nranks);
  std::iota(team.members.begin(), team.members.end(), 0);
  team.places.resize(nranks);
  team.inboxes = inboxes;
  std::vector<int> onHost;  // ranks seen so far, per host
  for (int r = 0; r < nranks; ++r) {
    const int host = hostOf.empty() ? 0 : hostOf[r];
    if (host >= static_cast<int>(onHost.size())) onHost.resize(host + 1, 0);
    team.places[r].host = host;
    team.places[r].localIndex = onHost[host]++;
  }
  team.hosts = static_cast<int>(onHost.size());
  team.mostRanksOnAHost = *std::max_element(onHost.begin(), onHost.end());
  team.fewestRanksOnAHost = *std::min_element(onHost.begin(), onHost.end());
  team.ring = ring.empty() ? team.members : ring;
  team.ringPosition = static_cast<int>(std::find(team.ring.begin(), team.ring.end(), rank) - team.ring.begin());
  team.connections = connections;
  team.slotBytes = connections->slotBytesAmong(team.members);
  team.tuning = tuning;
  team.keepSubTeams();
  keepAcrossHostsShape(team);
  return team;
}

}  // namespace loom::simulate

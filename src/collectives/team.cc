#include "collectives/team.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "base/error.h"

namespace loom {

Team Team::subTeam(const std::vector<int>& indices) const {
  Team sub;
  sub.nranks = static_cast<int>(indices.size());
  sub.rank = -1;
  for (int i = 0; i < sub.nranks; ++i) {
    const int index = indices[i];
    if (index < 0 || index >= nranks)
      fail(loomInternalError,
           "sub-team member " + std::to_string(index) + " is not in a team of " + std::to_string(nranks));
    if (index == rank) sub.rank = i;
    sub.members.push_back(members[index]);
    sub.places.push_back(places[index]);
  }
  if (sub.rank < 0) fail(loomInternalError, "a sub-team must include the rank that forms it");
  // The parent ring's order, restricted to the sub-team: it already crosses
  // sockets and NUMA nodes as few times as possible.
  for (int position = 0; position < nranks; ++position) {
    auto at = std::find(indices.begin(), indices.end(), ring[position]);
    if (at != indices.end()) sub.ring.push_back(static_cast<int>(at - indices.begin()));
  }
  for (int position = 0; position < sub.nranks; ++position)
    if (sub.ring[position] == sub.rank) sub.ringPosition = position;
  sub.connections = connections;
  sub.slotBytes = connections != nullptr ? connections->slotBytesAmong(sub.members) : slotBytes;
  sub.tuning = tuning;
  sub.windows = windows;
  sub.ranksPerCpu = ranksPerCpu;
  sub.sockets = sockets;
  sub.fewestCpusOnAHost = fewestCpusOnAHost;
  return sub;
}

struct Team::SubTeams {
  std::vector<std::vector<int>> membersByHost;
  std::vector<int> membersWithMyLocalIndex;
  Team host;
  Team localIndex;
};

const Team::SubTeams& Team::subTeams() const {
  if (!subTeams_) keepSubTeams();
  return *subTeams_;
}

void Team::keepSubTeams() const {
  auto kept = std::make_shared<SubTeams>();
  for (int index = 0; index < nranks; ++index) {
    const MemberPlace& place = places[index];
    if (place.host >= static_cast<int>(kept->membersByHost.size())) kept->membersByHost.resize(place.host + 1);
    kept->membersByHost[place.host].push_back(index);
    if (place.localIndex == places[rank].localIndex) kept->membersWithMyLocalIndex.push_back(index);
  }
  kept->host = subTeam(kept->membersByHost[places[rank].host]);
  kept->localIndex = subTeam(kept->membersWithMyLocalIndex);
  subTeams_ = std::move(kept);
}

const Team& Team::hostTeam() const {
  return subTeams().host;
}

const Team& Team::localIndexTeam() const {
  return subTeams().localIndex;
}

const std::vector<std::vector<int>>& Team::membersByHost() const {
  return subTeams().membersByHost;
}

const std::vector<int>& Team::membersWithMyLocalIndex() const {
  return subTeams().membersWithMyLocalIndex;
}

}  // namespace loom

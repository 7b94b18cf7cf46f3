#include "collectives/team.h"

#include <algorithm>

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
  return sub;
}

Team Team::hostTeam() const {
  return hostTeam_ ? *hostTeam_ : formHostTeam();
}

Team Team::localIndexTeam() const {
  return localIndexTeam_ ? *localIndexTeam_ : formLocalIndexTeam();
}

void Team::keepSubTeams() {
  hostTeam_ = std::make_shared<const Team>(formHostTeam());
  localIndexTeam_ = std::make_shared<const Team>(formLocalIndexTeam());
}

Team Team::formHostTeam() const {
  std::vector<int> indices;
  for (int i = 0; i < nranks; ++i)
    if (places[i].host == places[rank].host) indices.push_back(i);
  return subTeam(indices);
}

Team Team::formLocalIndexTeam() const {
  std::vector<int> indices;
  for (int i = 0; i < nranks; ++i)
    if (places[i].localIndex == places[rank].localIndex) indices.push_back(i);
  return subTeam(indices);
}

}  // namespace loom

// Where this rank sits among the ranks an algorithm runs on, and how it
// reaches them. A team is the communicator's ranks, or a sub-team of them
// (the ranks of this host; the ranks with this rank's local index on every
// host), so any algorithm runs on any of them: hierarchical algorithms are
// compositions. Algorithms speak team indices; the team maps them to the
// communicator's ranks, which the connections know.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "collectives/algorithm_table.h"
#include "collectives/cost_model.h"
#include "transport/connections.h"

namespace loom {

class PointToPointInboxes;
class RegisteredRegions;

// What the algorithm choice (plan.h) reads besides the team: LOOM_ALGO, the
// size thresholds and the cost model's constants.
struct Tuning {
  AlgorithmFilter allowed;  // LOOM_ALGO: which algorithms each collective may take
  size_t allPairsMaxBytes =
      16 * 1024;  // per rank; above it AllReduce uses the ring (whole result: AllGather across hosts, leaders)
  size_t directMinBytes = 0;             // whole buffer (as nccl-tests' size); single copy is weighed from it on
  size_t treeMaxBytes = SIZE_MAX;        // Broadcast/Reduce: the trees are weighed up to this, the chain always
  CostConstants costs = defaultCosts();  // the cost model's (cost_model.h), the same on every rank
};

// Where a member runs, as far as algorithms care.
struct MemberPlace {
  int host = 0;        // hosts numbered in order of their lowest communicator rank
  int localIndex = 0;  // place among its host's ranks, by communicator rank
  int package = -1;    // socket of its CPU binding; -1 when it spans several
  int numa = -1;       // NUMA node of its binding; -1 when it spans several
};

struct Team {
  int rank = 0;  // this rank's index in the team
  int nranks = 1;
  std::vector<int> members;            // members[i]: the communicator rank at team index i
  std::vector<MemberPlace> places;     // by team index
  std::vector<int> ring;               // ring[i] is the team index at ring position i
  int ringPosition = 0;                // this rank's position in `ring`
  Connections* connections = nullptr;  // by communicator rank; null when the communicator has one rank
  // The largest message one slot carries on every link among the members
  // (Connections::slotBytesAmong): algorithms cut by it, never by the slot
  // of the one connection they use, so that ranks whose neighbours are
  // reached over different transports still cut every message alike.
  size_t slotBytes = 0;
  // Hosts among the members; set once at init for the communicator's team
  // (sub-teams keep 1: they do not nest).
  int hosts = 1;
  // The most and the fewest members on one host; set with `hosts`.
  int mostRanksOnAHost = 1;
  int fewestRanksOnAHost = 1;
  // Ranks per CPU on the most crowded host and the most sockets one host's
  // members are bound to (topo::mostCrowdedHost), set once the members'
  // places are known; sub-teams share their parent's.
  double ranksPerCpu = 1;
  int sockets = 1;
  int fewestCpusOnAHost = 0;
  // On two hosts: the bytes of one segment of the overlapped AllReduce in
  // steps (hierarchical_pipeline.h), set with `hosts`; 0 elsewhere.
  size_t twoHostSegmentBytes = 0;
  // On several hosts: the slot of the links between one rank per host (the
  // hosts' first ranks), which the steps across hosts cut by; set with
  // `hosts`, 0 elsewhere.
  size_t acrossSlotBytes = 0;
  Tuning tuning;
  PointToPointInboxes* inboxes = nullptr;  // Recv's tag matching (p2p_inbox.h); the communicator's
  RegisteredRegions* windows = nullptr;    // registered buffers (registered.h); changed only by (de)registration
  // Scratch for a schedule that keeps partial results across its waits;
  // collectives run one at a time per communicator, so one buffer serves.
  mutable std::vector<char> reduceScratch;
  mutable RankedMemo rankedMemo;  // the cost model's last choices (plan.h's cheapestRanked)

  int peerOf(int index) const { return members[index]; }
  SendConnection& sendTo(int index, Channel channel = Channel::kCollective) const {
    return connections->sendTo(members[index], channel);
  }
  RecvConnection& recvFrom(int index, Channel channel = Channel::kCollective) const {
    return connections->recvFrom(members[index], channel);
  }
  // Single-copy transfers with every member's memory, or null.
  PeerMemory* peerMemory() const { return connections != nullptr ? connections->peerMemory() : nullptr; }

  int ringRank(int position) const { return ring[((position % nranks) + nranks) % nranks]; }
  int positionOf(int index) const {
    int position = 0;
    while (ring[position] != index) ++position;
    return position;
  }
  // Steps forward around the ring from team index `index` to this rank.
  int hopsFrom(int index) const { return ((ringPosition - positionOf(index)) % nranks + nranks) % nranks; }
  SendConnection& next() const { return sendTo(ringRank(ringPosition + 1)); }
  RecvConnection& prev() const { return recvFrom(ringRank(ringPosition - 1)); }

  // The members at `indices` (which must include this rank), numbered in
  // that order; the ring follows this team's ring order. Shares the
  // connections, tuning and registered buffers.
  Team subTeam(const std::vector<int>& indices) const;
  // This rank's host's members, by ascending team index.
  const Team& hostTeam() const;
  // The members with this rank's local index, one per host, by ascending
  // team index.
  const Team& localIndexTeam() const;
  // Team indices of every host's members: by host (MemberPlace order), then
  // by local index. hostTeam() numbers this rank's host's list so.
  const std::vector<std::vector<int>>& membersByHost() const;
  // Team indices of localIndexTeam()'s members, in its order.
  const std::vector<int>& membersWithMyLocalIndex() const;
  // Forms the sub-teams and member lists above now (the communicator does,
  // at init, after its members' places are final), so that no collective
  // looks at every pair of members or allocates them on its call. Unkept,
  // they are formed on first use; either way a team's rank and places must
  // not change after.
  void keepSubTeams() const;

 private:
  struct SubTeams;
  // Shared by copies of this team; one communicator runs one collective
  // at a time, so the first use forms it unraced.
  mutable std::shared_ptr<const SubTeams> subTeams_;
  const SubTeams& subTeams() const;
};

}  // namespace loom

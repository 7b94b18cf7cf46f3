// AllGather and ReduceScatter in steps within and across hosts, on any
// layout of several hosts (hierarchical.h). The local indices every host
// has, as many as the smallest host's ranks, are lanes: lane i's ranks, one
// per host, carry the network steps. Where every host has as many ranks,
// each lane carries its own ranks' blocks in one round. Where hosts differ,
// a larger host's further ranks hand their blocks to a lane (member j to
// lane j mod lanes) and the lanes cross the network in several rounds: in
// round k, lane i carries the block of each host's member k * lanes + i,
// an empty block where that host has no such member.
#include <vector>

#include "base/dtype_size.h"
#include "collectives/collectives.h"
#include "collectives/hierarchical.h"
#include "collectives/plan.h"
#include "collectives/primitives.h"
#include "collectives/ring_blocks.h"

namespace loom {
namespace {

struct Lanes {
  int lanes = 1;   // the fewest ranks on a host
  int rounds = 1;  // enough for the most ranks on a host

  static Lanes of(const Team& team) {
    Lanes l;
    l.lanes = team.fewestRanksOnAHost;
    l.rounds = (team.mostRanksOnAHost + l.lanes - 1) / l.lanes;
    return l;
  }
  // The local index whose block `lane` carries in `round`.
  int member(int lane, int round) const { return round * lanes + lane; }
  // The lane that carries local index `member`'s block.
  int laneOf(int member) const { return member % lanes; }
};

// A block of `count` elements at the place of rank `ofHost[member]`, or an
// empty one where that host has no such member.
void addBlock(BlockLayout& layout, const std::vector<int>& ofHost, int member, size_t count) {
  const bool has = member >= 0 && member < static_cast<int>(ofHost.size());
  layout.offset.push_back(has ? static_cast<size_t>(ofHost[member]) * count : 0);
  layout.size.push_back(has ? count : 0);
}

// Within a host of `hostSize` members, in `round`: member i < lanes owns the
// block of host `ofHost`'s member that lane i carries; the others none.
BlockLayout withinHost(const Lanes& l, int hostSize, const std::vector<int>& ofHost, int round, size_t count) {
  BlockLayout layout;
  for (int i = 0; i < hostSize; ++i) addBlock(layout, ofHost, i < l.lanes ? l.member(i, round) : -1, count);
  return layout;
}

// Across hosts, for this rank's lane in `round`: each member of the lane's
// team owns the block of its host's member that the lane carries.
BlockLayout acrossHosts(const Team& team, const Team& across, const Lanes& l, int lane, int round, size_t count) {
  BlockLayout layout;
  for (int i = 0; i < across.nranks; ++i)
    addBlock(layout, team.membersByHost()[across.places[i].host], l.member(lane, round), count);
  return layout;
}

// Where every host has as many ranks (one round, every block full), the
// lanes may cross hosts in any flat schedule: the cost model's cheapest for
// the lane's `bytes`, every lane crossing at once. Elsewhere the ring,
// which carries empty blocks for nothing.
TunedAlgorithm acrossHostsSchedule(TunedCollective collective, const Team& team, const Team& across, const Lanes& l,
                                   size_t bytes) {
  if (l.rounds != 1) return TunedAlgorithm::kRing;
  return cheapestAcrossHosts(collective, acrossHostsInputs(planInputsOf(team), across.nranks, l.lanes), team.tuning,
                             bytes);
}

// The block of the lane's member on host `h`: where it lies in the result.
size_t blockOffset(const Team& team, int h, int member, size_t count) {
  return static_cast<size_t>(team.membersByHost()[h][member]) * count;
}

}  // namespace

// AllGather: block r of the result is rank r's. A further rank hands its
// block to its lane; each lane gathers its blocks across hosts, round by
// round; then within each host, for every host h and round, the lanes pass
// on what they carried of host h. A host's link carries every block but
// those of the next host of the lanes' rings (on two hosts: its own
// ranks'), where a flat ring carries n-1 blocks on every link.
Task<> hierarchicalAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const Team& host = team.hostTeam();
  const Lanes l = Lanes::of(team);
  const size_t count = args.count;
  const size_t elementSize = dtypeSize(args.dtype);
  Primitives prims(wait, args.dtype, loomSum, host.nranks, args.memory);
  char* out = static_cast<char*>(args.recvbuf);
  executorFor(args.memory)
      .copy(out + static_cast<size_t>(team.rank) * count * elementSize, args.sendbuf, count * elementSize);
  const std::vector<int>& mine = team.membersByHost()[team.places[team.rank].host];

  if (host.rank >= l.lanes) {
    co_await prims.sendAll(host.sendTo(l.laneOf(host.rank)), args.sendbuf, count, prims.chunkElements(host.slotBytes));
  } else {
    for (int round = 1; round < l.rounds; ++round) {
      const int member = l.member(host.rank, round);
      if (member < host.nranks)
        co_await prims.recvAll(host.recvFrom(member), out + static_cast<size_t>(mine[member]) * count * elementSize,
                               count, prims.chunkElements(host.slotBytes));
    }
    const Team& across = team.localIndexTeam();
    const size_t laneBytes = static_cast<size_t>(across.nranks) * count * elementSize;
    const TunedAlgorithm schedule = acrossHostsSchedule(TunedCollective::kAllGather, team, across, l, laneBytes);
    if (schedule == TunedAlgorithm::kRing) {
      for (int round = 0; round < l.rounds; ++round)
        co_await ringAllGatherBlocks(across, out, acrossHosts(team, across, l, host.rank, round, count), args.dtype,
                                     args.memory, wait);
    } else {
      // The flat schedule gathers the lane's blocks in its team's order
      // into scratch (its own scratch is the lane team's); each goes to
      // its place in the result.
      std::vector<char>& gathered = team.reduceScratch;
      gathered.resize(laneBytes);
      CollectiveArgs lane{out + static_cast<size_t>(team.rank) * count * elementSize, gathered.data(), count,
                          args.dtype};
      lane.memory = args.memory;
      if (schedule == TunedAlgorithm::kBruck)
        co_await bruckAllGather(across, lane, wait);
      else
        co_await halvingDoublingAllGather(across, lane, wait);
      for (int i = 0; i < across.nranks; ++i)
        if (i != across.rank)
          executorFor(args.memory)
              .copy(out + blockOffset(team, across.places[i].host, host.rank, count) * elementSize,
                    gathered.data() + static_cast<size_t>(i) * count * elementSize, count * elementSize);
    }
  }

  for (const std::vector<int>& ofHost : team.membersByHost())
    for (int round = 0; round < l.rounds; ++round)
      co_await ringAllGatherBlocks(host, out, withinHost(l, host.nranks, ofHost, round, count), args.dtype, args.memory,
                                   wait);
}

// ReduceScatter: rank r ends with the reduction of every rank's block r.
// Within each host first, for every host h and round: each lane gets the
// host's partial reduction of the block of host h's member it carries (kept
// in scratch by host and round); then each lane reduce-scatters those
// across hosts, round by round; a lane hands a further rank its result. A
// host's link carries its partial reductions of the other hosts' blocks.
Task<> hierarchicalReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const Team& host = team.hostTeam();
  const Lanes l = Lanes::of(team);
  const size_t count = args.count;
  const size_t elementSize = dtypeSize(args.dtype);
  const loomRedOp_t op = args.op == loomAvg ? loomSum : args.op;  // divided once at the end
  Primitives prims(wait, args.dtype, op, host.nranks, args.memory);
  const bool lane = host.rank < l.lanes;
  // Partial reductions: host h's round k at (h * rounds + k) * count.
  const int hosts = static_cast<int>(team.membersByHost().size());
  const Team* laneTeam = lane ? &team.localIndexTeam() : nullptr;
  const size_t laneBytes = static_cast<size_t>(hosts) * count * elementSize;
  const TunedAlgorithm schedule =
      lane ? acrossHostsSchedule(TunedCollective::kReduceScatter, team, *laneTeam, l, laneBytes)
           : TunedAlgorithm::kRing;
  // A flat schedule other than the ring takes the partials in the lane
  // team's order: room for them after the partials.
  std::vector<char>& partials = team.reduceScratch;
  if (lane)
    partials.resize(static_cast<size_t>(hosts) * l.rounds * count * elementSize +
                    (schedule == TunedAlgorithm::kRing ? 0 : laneBytes));
  auto partial = [&](int ofHost, int round) {
    return partials.data() + (static_cast<size_t>(ofHost) * l.rounds + round) * count * elementSize;
  };

  for (int h = 0; h < hosts; ++h)
    for (int round = 0; round < l.rounds; ++round)
      co_await ringReduceScatterBlocks(host, args.sendbuf,
                                       withinHost(l, host.nranks, team.membersByHost()[h], round, count),
                                       lane ? partial(h, round) : args.recvbuf,  // a further rank's block is empty
                                       args.dtype, op, args.memory, wait);

  if (lane && schedule != TunedAlgorithm::kRing) {
    // One round: host h's partial reduction at h * count, in host order.
    char* ordered = partials.data() + static_cast<size_t>(hosts) * count * elementSize;
    for (int i = 0; i < laneTeam->nranks; ++i)
      executorFor(args.memory)
          .copy(ordered + static_cast<size_t>(i) * count * elementSize, partial(laneTeam->places[i].host, 0),
                count * elementSize);
    CollectiveArgs laneArgs{ordered, args.recvbuf, count, args.dtype, op};
    laneArgs.memory = args.memory;
    co_await halvingDoublingReduceScatter(*laneTeam, laneArgs, wait);
  } else if (lane) {
    const Team& across = *laneTeam;
    const int myHost = team.places[team.rank].host;
    for (int round = 0; round < l.rounds; ++round) {
      // Where a host has no such member its block is empty; its lane still
      // passes the other hosts' partial reductions on.
      const int member = l.member(host.rank, round);
      BlockLayout blocks;
      for (int i = 0; i < across.nranks; ++i) {
        const int h = across.places[i].host;
        const bool has = member < static_cast<int>(team.membersByHost()[h].size());
        blocks.offset.push_back((static_cast<size_t>(h) * l.rounds + round) * count);
        blocks.size.push_back(has ? count : 0);
      }
      void* result = round == 0 ? args.recvbuf : static_cast<void*>(partial(myHost, round));
      co_await ringReduceScatterBlocks(across, partials.data(), blocks, result, args.dtype, op, args.memory, wait);
      if (round > 0 && member < host.nranks)
        co_await prims.sendAll(host.sendTo(member), result, count, prims.chunkElements(host.slotBytes));
    }
  } else {
    co_await prims.recvAll(host.recvFrom(l.laneOf(host.rank)), args.recvbuf, count,
                           prims.chunkElements(host.slotBytes));
  }
  if (args.op == loomAvg) executorFor(args.memory).divide(args.recvbuf, count, args.dtype, team.nranks);
}

}  // namespace loom

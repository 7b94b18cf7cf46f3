#include "collectives/hierarchical.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype_size.h"
#include "base/error.h"
#include "collectives/all_pairs.h"
#include "collectives/collectives.h"
#include "collectives/hierarchical_pipeline.h"
#include "collectives/plan.h"
#include "collectives/primitives.h"
#include "collectives/ring_blocks.h"

namespace loom {
namespace {

// Ranks on each host, hosts in the order MemberPlace numbers them.
std::vector<int> ranksPerHost(const Team& team) {
  std::vector<int> counts;
  for (const MemberPlace& place : team.places) {
    if (place.host >= static_cast<int>(counts.size())) counts.resize(place.host + 1, 0);
    ++counts[place.host];
  }
  return counts;
}

// A host's leader: the host team's index 0, its lowest rank (local index 0).
constexpr int kHostLeader = 0;

// A rank other than its host's leader, in a collective through leaders:
// sends its `bytes` up, then copies the `resultBytes` that come back.
Task<> throughLeader(const Team& host, const void* mine, size_t bytes, void* result, size_t resultBytes,
                     const Executor& exec, const WaitContext& wait) {
  SendConnection& up = host.sendTo(kHostLeader);
  void* slot = co_await up.acquire(wait);
  up.postFrom(slot, mine, bytes);
  RecvConnection& down = host.recvFrom(kHostLeader);
  const void* back = co_await down.acquire(wait, resultBytes);
  exec.copy(result, back, resultBytes);
  down.release();
}

// The step across hosts of an AllReduce in steps or through leaders: among
// `across` (one rank per host of `team`, `block` its part of the buffer),
// the cost model's cheapest schedule, with `lanes` such teams crossing each
// host's link at once (each local index of the steps runs its own; the
// leaders are one). It weighs them from `team`'s inputs, as
// plan_estimates.cc estimates it. A size rule would take
// all-pairs for every small block, which sends each block to every host:
// at 16 hosts, 7.5 times a ring's bytes. One lane (the leaders' small calls
// back to back) keeps its choice in the lane team's memo: the team serves
// no other shape of step with one lane.
Task<> allReduceAcrossHosts(const Team& team, const Team& across, int lanes, const CollectiveArgs& block,
                            const WaitContext& wait) {
  PlanInputs in = acrossHostsInputs(planInputsOf(team), across.nranks, lanes);
  if (lanes == 1) in.memo = &across.rankedMemo;
  const size_t bytes = block.count * dtypeSize(block.dtype);
  switch (cheapestAcrossHosts(TunedCollective::kAllReduce, in, across.tuning, bytes)) {
    case TunedAlgorithm::kAllPairs: return allPairsAllReduce(across, block, wait);
    case TunedAlgorithm::kTree: return doubleTreeAllReduce(across, block, wait);
    case TunedAlgorithm::kHalvingDoubling: return halvingDoublingAllReduce(across, block, wait);
    default: return ringAllReduce(across, block, wait);
  }
}

}  // namespace

int hostsOf(const Team& team) {
  return static_cast<int>(ranksPerHost(team).size());
}

std::string describeHosts(const Team& team) {
  const std::vector<int> counts = ranksPerHost(team);
  std::string text = std::to_string(counts.size()) + (counts.size() == 1 ? " host with " : " hosts with ");
  for (size_t i = 0; i < counts.size(); ++i) {
    if (i > 0) text += i + 1 == counts.size() ? " and " : ", ";
    text += std::to_string(counts[i]);
  }
  return text + (counts.size() == 1 && counts.front() == 1 ? " rank" : " ranks");
}

bool hierarchicalFits(const Team& team) {
  return team.hosts >= 2 && team.nranks > team.hosts;
}

void keepAcrossHostsShape(Team& team) {
  team.twoHostSegmentBytes = twoHostSegmentBytes(team);
  team.acrossSlotBytes = 0;
  if (team.hosts < 2 || team.connections == nullptr) return;
  std::vector<int> firsts;
  for (const std::vector<int>& members : team.membersByHost()) firsts.push_back(team.peerOf(members.front()));
  team.acrossSlotBytes = team.connections->slotBytesAmong(firsts);
}

Task<> hierarchicalAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const Executor& exec = executorFor(args.memory);
  const Team& host = team.hostTeam();
  if (host.rank != team.places[team.rank].localIndex)
    fail(loomInternalError, "a host team's index differs from the rank's local index");
  // The buffer is cut into one block per local index that every host has
  // (as many as the smallest host's ranks): block i belongs to local index
  // i on every host, so the ranks with local index i, one per host, reduce
  // the same block across hosts. A larger host's other ranks own an empty
  // block: they add their input within the host and receive the result.
  const size_t shared = static_cast<size_t>(team.fewestRanksOnAHost);
  BlockLayout blocks = BlockLayout::even(args.count, static_cast<int>(shared));
  blocks.offset.resize(static_cast<size_t>(host.nranks), 0);
  blocks.size.resize(static_cast<size_t>(host.nranks), 0);
  // avg is a sum until the very end, divided once by every rank's count.
  const loomRedOp_t op = args.op == loomAvg ? loomSum : args.op;
  const size_t elementSize = dtypeSize(args.dtype);
  char* mine = static_cast<char*>(args.recvbuf) + blocks.offset[host.rank] * elementSize;
  const size_t mineCount = blocks.size[host.rank];
  // On two hosts, blocks of several segments overlap the steps (every rank
  // of both hosts decides alike: the same blocks, the same links).
  const size_t segment = team.twoHostSegmentBytes / elementSize;
  if (segment > 0 && blocks.largest() > segment) {
    co_await pipelinedTwoHostAllReduce(team, args, blocks, static_cast<int>(shared), segment, wait);
    co_return;
  }

  co_await ringReduceScatterBlocks(host, args.sendbuf, blocks, mine, args.dtype, op, args.memory, wait);

  if (static_cast<size_t>(host.rank) < shared) {
    const Team& across = team.localIndexTeam();  // one member per host
    CollectiveArgs block{mine, mine, mineCount, args.dtype, op, 0};
    co_await allReduceAcrossHosts(team, across, static_cast<int>(shared), block, wait);
    if (args.op == loomAvg) exec.divide(mine, mineCount, args.dtype, team.nranks);
  }

  co_await ringAllGatherBlocks(host, args.recvbuf, blocks, args.dtype, args.memory, wait);
}

// Small AllReduce through one leader per host, as Open MPI's HAN: each
// host's ranks send their input to the host's first rank, which reduces
// them in local-index order; the leaders AllReduce the host sums over the
// network (the cost model's cheapest schedule among them: one all-pairs
// step on few hosts, halving/doubling or a tree on many); each leader
// hands the result back.
// Only the leaders touch the network, and every other rank waits once. On
// oversubscribed cores each wait is a sleep and a wake-up, and each TCP
// message costs its sender tens of microseconds of kernel time: all-pairs
// within hosts, then all-pairs among the ranks of each local index, moved
// twice the messages with twice the sleeps and was 2.5x slower on 2 hosts
// x 2 ranks (docs/PERF.md). Every rank gets bitwise the same result: its
// leader's, and every schedule across leaves the leaders one result.
Task<> leaderAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const Executor& exec = executorFor(args.memory);
  const Team& host = team.hostTeam();
  const loomRedOp_t op = args.op == loomAvg ? loomSum : args.op;
  const size_t bytes = args.count * dtypeSize(args.dtype);
  if (host.rank != kHostLeader) {
    co_await throughLeader(host, args.sendbuf, bytes, args.recvbuf, bytes, exec, wait);
    co_return;
  }
  exec.copy(args.recvbuf, args.sendbuf, bytes);
  for (int member = 1; member < host.nranks; ++member) {
    RecvConnection& from = host.recvFrom(member);
    const void* input = co_await from.acquire(wait, bytes);
    exec.reduce(args.recvbuf, args.recvbuf, input, args.count, args.dtype, op);
    from.release();
  }

  const CollectiveArgs hostSums{args.recvbuf, args.recvbuf, args.count, args.dtype, op, 0};
  co_await allReduceAcrossHosts(team, team.localIndexTeam(), 1, hostSums, wait);
  if (args.op == loomAvg) exec.divide(args.recvbuf, args.count, args.dtype, team.nranks);

  for (int member = 1; member < host.nranks; ++member) {
    SendConnection& to = host.sendTo(member);
    void* slot = co_await to.acquire(wait);
    to.postFrom(slot, args.recvbuf, bytes);
  }
}

// Small AllGather through one leader per host, as leaderAllReduce: each
// host's ranks send their block to the host's first rank; the leaders
// swap their hosts' blocks, packed in local-index order, in one all-pairs
// step over the network; each leader hands the whole result back.
Task<> leaderAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const Executor& exec = executorFor(args.memory);
  const Team& host = team.hostTeam();
  const size_t bytes = args.count * dtypeSize(args.dtype);
  char* out = static_cast<char*>(args.recvbuf);
  if (host.rank != kHostLeader) {
    co_await throughLeader(host, args.sendbuf, bytes, out, bytes * team.nranks, exec, wait);
    co_return;
  }
  const std::vector<int>& mine = team.membersByHost()[team.places[team.rank].host];
  exec.copy(out + static_cast<size_t>(team.rank) * bytes, args.sendbuf, bytes);
  for (int member = 1; member < host.nranks; ++member) {
    RecvConnection& from = host.recvFrom(member);
    const void* block = co_await from.acquire(wait, bytes);
    exec.copy(out + static_cast<size_t>(mine[member]) * bytes, block, bytes);
    from.release();
  }

  const Team& leaders = team.localIndexTeam();
  for (int peer = 0; peer < leaders.nranks; ++peer) {
    if (peer == leaders.rank) continue;
    SendConnection& to = leaders.sendTo(peer);
    char* slot = static_cast<char*>(co_await to.acquire(wait));
    for (size_t i = 0; i < mine.size(); ++i)
      exec.copy(slot + i * bytes, out + static_cast<size_t>(mine[i]) * bytes, bytes);
    to.post(mine.size() * bytes);
  }
  for (int peer = 0; peer < leaders.nranks; ++peer) {
    if (peer == leaders.rank) continue;
    const std::vector<int>& theirs = team.membersByHost()[leaders.places[peer].host];
    RecvConnection& from = leaders.recvFrom(peer);
    const char* blocks = static_cast<const char*>(co_await from.acquire(wait, theirs.size() * bytes));
    for (size_t i = 0; i < theirs.size(); ++i)
      exec.copy(out + static_cast<size_t>(theirs[i]) * bytes, blocks + i * bytes, bytes);
    from.release();
  }

  for (int member = 1; member < host.nranks; ++member) {
    SendConnection& to = host.sendTo(member);
    void* slot = co_await to.acquire(wait);
    to.postFrom(slot, out, bytes * team.nranks);
  }
}

}  // namespace loom

#include <string>
#include <vector>

#include "base/error.h"
#include "collectives/all_pairs.h"
#include "collectives/hierarchical.h"
#include "collectives/primitives.h"
#include "collectives/ring_blocks.h"
#include "reduce/reduce.h"

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

}  // namespace

int ranksPerHostIfEven(const Team& team) {
  const std::vector<int> counts = ranksPerHost(team);
  if (counts.size() < 2 || counts.front() < 2) return 0;
  for (int count : counts)
    if (count != counts.front()) return 0;
  return counts.front();
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

Task<> hierarchicalAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const Team host = team.hostTeam();
  const Team across = team.localIndexTeam();
  // Block i belongs to host index i; the members of `across` share this
  // rank's host index, so they all reduce the same block.
  if (host.rank != team.places[team.rank].localIndex)
    fail(loomInternalError, "a host team's index differs from the rank's local index");
  // avg is a sum until the very end, divided once by every rank's count.
  const loomRedOp_t op = args.op == loomAvg ? loomSum : args.op;
  const EvenSplit blocks{args.count, host.nranks};
  const size_t elementSize = loomTypeSize(args.dtype);
  char* mine = static_cast<char*>(args.recvbuf) + blocks.blockOffset(host.rank) * elementSize;
  const size_t mineCount = blocks.blockSize(host.rank);

  co_await ringReduceScatterBlocks(host, args.sendbuf, args.recvbuf, blocks, args.dtype, op, wait);

  CollectiveArgs block{mine, mine, mineCount, args.dtype, op, 0};
  if (fitsAllPairs(across, mineCount * elementSize, across.tuning.allPairsMaxBytes))
    co_await allPairsAllReduce(across, block, wait);
  else
    co_await ringAllReduce(across, block, wait);
  if (args.op == loomAvg) divideArray(mine, mineCount, args.dtype, team.nranks);

  co_await ringAllGatherBlocks(host, args.recvbuf, blocks, args.dtype, wait);
}

}  // namespace loom

// Algorithms as schedules of primitives. Each runs on one rank, on the
// progress thread (or the caller's, for a blocking call on an idle
// communicator), and returns when this rank's part is done.
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <vector>

#include "base/task.h"
#include "collectives/executor.h"
#include "collectives/team.h"
#include "transport/wait_context.h"

namespace loom {

struct CollectiveArgs {
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  size_t count = 0;  // per the C API's meaning for the collective
  loomDataType_t dtype = loomUint8;
  loomRedOp_t op = loomSum;
  int root = 0;                           // Broadcast, Reduce; the peer for Send and Recv
  int tag = 0;                            // Send and Recv: messages match by peer and tag
  int* source = nullptr;                  // Recv from any source (root -1): where its sender's rank goes
  MemoryKind memory = MemoryKind::kHost;  // where sendbuf and recvbuf live: it chooses the executor
};

Task<> ringAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
// log2(P) hops each way, for many ranks: double_tree.cc, halving_doubling.cc.
Task<> doubleTreeAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> halvingDoublingAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> halvingDoublingReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> halvingDoublingAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> ringAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> bruckAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> ringReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> chainBroadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> chainReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> treeBroadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> treeReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> binomialBroadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> binomialReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> pairwiseAllToAll(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
// AllToAllv's counts and displacements, in elements, one per team index.
struct VariableBlocks {
  std::vector<size_t> sendCounts, sendDispls, recvCounts, recvDispls;
};
Task<> pairwiseAllToAllv(const Team& team, const CollectiveArgs& args, const VariableBlocks& blocks,
                         const WaitContext& wait);
// args.root's exchanges with every rank in turn (rooted_blocks.cc).
Task<> directGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> directScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> pointToPointSend(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> pointToPointRecv(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> ringBarrier(const Team& team, const WaitContext& wait);
Task<> disseminationBarrier(const Team& team, const WaitContext& wait);  // log2(P) rounds

// Entry points that run the algorithm plan.h picks (its rules, then the
// cost model's least estimate), identically on every rank since the inputs
// are (select.cc).
Task<> allReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> allGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> reduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> broadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> reduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> barrier(const Team& team, const WaitContext& wait);

// Splits `total` elements into `parts` nearly equal blocks; block i starts at
// blockOffset(i) and has blockSize(i) elements (sizes differ by at most one).
struct EvenSplit {
  size_t total;
  int parts;
  size_t blockSize(int i) const { return total / parts + (static_cast<size_t>(i) < total % parts ? 1 : 0); }
  size_t blockOffset(int i) const {
    size_t base = total / parts, extra = total % parts;
    return base * i + (static_cast<size_t>(i) < extra ? i : extra);
  }
};

}  // namespace loom

#include "collectives/registered.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "base/dtype_size.h"
#include "collectives/all_pairs.h"
#include "collectives/primitives.h"
#include "collectives/scratch.h"
#include "reduce/reduce.h"
#include "transport/regions.h"

namespace loom {
namespace {

// Every rank's buffers as registered regions, and where this process maps
// them (null where its kind reaches them only through posted transfers).
struct Reached {
  PeerRegion* sendRegion;
  PeerRegion* recvRegion;
  const char* send;
  char* recv;
};

// Null unless every rank's whole send and receive ranges are registered.
// Every rank sees the same windows and addresses, so all decide alike; how
// each then reaches its peers (stores or posted transfers) is its own.
std::optional<std::vector<Reached>> reachAll(const Team& team, const std::vector<PeerBuffers>& peers, size_t sendBytes,
                                             size_t recvBytes, bool* allMapped) {
  std::vector<Reached> reached(team.nranks);
  *allMapped = true;
  for (int r = 0; r < team.nranks; ++r) {
    const uint64_t send = reinterpret_cast<uintptr_t>(peers[r].send), recv = reinterpret_cast<uintptr_t>(peers[r].recv);
    Reached& at = reached[r];
    at.sendRegion = team.windows->regionOf(team.peerOf(r), send, sendBytes);
    at.recvRegion = team.windows->regionOf(team.peerOf(r), recv, recvBytes);
    if (at.sendRegion == nullptr || at.recvRegion == nullptr) return std::nullopt;
    at.send = at.sendRegion->translate(send, sendBytes);
    at.recv = at.recvRegion->translate(recv, recvBytes);
    *allMapped = *allMapped && at.send != nullptr && at.recv != nullptr;
  }
  return reached;
}

// out = in_0 op in_1 op ... op in_{P-1} over `count` elements, in rank
// order (the result does not depend on which rank computes it), then
// divided for avg.
void reduceInOrder(const std::vector<const char*>& inputs, size_t count, char* out, const CollectiveArgs& args) {
  const int n = static_cast<int>(inputs.size());
  reduceArrays(out, inputs[0], inputs[1], count, args.dtype, args.op);
  for (int r = 2; r < n; ++r) reduceArrays(out, out, inputs[r], count, args.dtype, args.op);
  if (args.op == loomAvg) divideArray(out, count, args.dtype, n);
}

// Every rank's input at byte `offset`, as mapped here.
std::vector<const char*> mappedInputs(const std::vector<Reached>& ranks, size_t offset) {
  std::vector<const char*> inputs;
  for (const Reached& rank : ranks) inputs.push_back(rank.send + offset);
  return inputs;
}

// Chunks of at most a scratch buffer, so what a step writes twice (or reads
// twice) comes from cache the second time.
template <typename Step>
void inChunks(size_t count, size_t elem, const Step& step) {
  const size_t chunk = kScratchChunkBytes / elem;
  for (size_t at = 0; at < count; at += chunk) step(at * elem, std::min(chunk, count - at));
}

// The posted forms, for kinds that reach peers' registered memory only by
// transfers (an RDMA NIC): read each peer's chunk into the team's scratch,
// reduce there, write results out; wait for every transfer before a buffer
// is touched again.

Task<> awaitAll(const std::vector<Reached>& ranks, bool sends, const WaitContext& wait) {
  for (const Reached& rank : ranks)
    co_await TransfersDone{(sends ? rank.sendRegion : rank.recvRegion)->completions(), wait};
}

// Every rank's chunk of `n` elements at byte `offset` of its input: this
// rank's in place, the others' read into the team's scratch.
Task<std::vector<const char*>> readInputs(const Team& team, const std::vector<Reached>& ranks,
                                          const std::vector<PeerBuffers>& peers, size_t offset, size_t bytes,
                                          const WaitContext& wait) {
  std::vector<const char*> inputs(team.nranks);
  for (int r = 0; r < team.nranks; ++r) {
    if (r == team.rank) {
      inputs[r] = peers[r].send + offset;
      continue;
    }
    char* into = team.reduceScratch.data() + (r + 1) * kScratchChunkBytes;
    ranks[r].sendRegion->postRead(reinterpret_cast<uintptr_t>(peers[r].send) + offset, into, bytes);
    inputs[r] = into;
  }
  co_await awaitAll(ranks, true, wait);
  co_return inputs;
}

// This rank's `bytes` at `from` into byte `offset` of every rank's output.
Task<> writeToAll(const Team& team, const std::vector<Reached>& ranks, const std::vector<PeerBuffers>& peers,
                  const char* from, size_t offset, size_t bytes, const WaitContext& wait) {
  for (int step = 1; step <= team.nranks; ++step) {
    const int r = (team.rank + step) % team.nranks;
    if (r == team.rank) {
      if (peers[r].recv + offset != from) copyBytes(peers[r].recv + offset, from, bytes);
      continue;
    }
    ranks[r].recvRegion->postWrite(reinterpret_cast<uintptr_t>(peers[r].recv) + offset, from, bytes);
  }
  co_await awaitAll(ranks, false, wait);
}

// Room for a sum and a chunk of every rank's input.
char* postedScratch(const Team& team) {
  team.reduceScratch.resize((team.nranks + 1) * kScratchChunkBytes);
  return team.reduceScratch.data();
}

}  // namespace

Task<bool> registeredReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                                   const std::vector<PeerBuffers>& peers) {
  const size_t elem = dtypeSize(args.dtype);
  const size_t blockBytes = args.count * elem;
  bool mapped = false;
  auto ranks = reachAll(team, peers, blockBytes * team.nranks, blockBytes, &mapped);
  if (!ranks) co_return false;
  char* out = peers[team.rank].recv;
  const size_t own = team.rank * blockBytes;
  if (mapped) {
    // Through the accumulator: in place, out is this rank's input block,
    // which a direct reduction would overwrite before reading it.
    char* sum = threadScratch().accumulator();
    inChunks(args.count, elem, [&](size_t at, size_t n) {
      reduceInOrder(mappedInputs(*ranks, own + at), n, sum, args);
      copyBytes(out + at, sum, n * elem);
    });
  } else {
    char* sum = postedScratch(team);
    const size_t chunk = kScratchChunkBytes / elem;
    for (size_t at = 0; at < args.count; at += chunk) {
      const size_t n = std::min(chunk, args.count - at);
      const std::vector<const char*> inputs = co_await readInputs(team, *ranks, peers, own + at * elem, n * elem, wait);
      reduceInOrder(inputs, n, sum, args);
      copyBytes(out + at * elem, sum, n * elem);
    }
  }
  co_await allPairsBarrier(team, wait);
  team.windows->countSingleCopyCall();
  co_return true;
}

Task<bool> registeredAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                               const std::vector<PeerBuffers>& peers) {
  const size_t elem = dtypeSize(args.dtype);
  const size_t blockBytes = args.count * elem;
  bool mapped = false;
  auto ranks = reachAll(team, peers, blockBytes, blockBytes * team.nranks, &mapped);
  if (!ranks) co_return false;
  const char* in = peers[team.rank].send;
  const size_t own = team.rank * blockBytes;
  if (mapped) {
    inChunks(args.count, elem, [&](size_t at, size_t n) {
      // Starting with the next rank spreads the ranks' writes over the peers.
      for (int step = 1; step <= team.nranks; ++step)
        copyBytes((*ranks)[(team.rank + step) % team.nranks].recv + own + at, in + at, n * elem);
    });
  } else {
    co_await writeToAll(team, *ranks, peers, in, own, blockBytes, wait);
  }
  co_await allPairsBarrier(team, wait);
  team.windows->countSingleCopyCall();
  co_return true;
}

Task<bool> registeredAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                               const std::vector<PeerBuffers>& peers) {
  const size_t elem = dtypeSize(args.dtype);
  const size_t bytes = args.count * elem;
  bool mapped = false;
  auto ranks = reachAll(team, peers, bytes, bytes, &mapped);
  if (!ranks) co_return false;
  EvenSplit blocks{args.count, team.nranks};
  const size_t own = blocks.blockOffset(team.rank) * elem;
  if (mapped) {
    char* sum = threadScratch().accumulator();
    inChunks(blocks.blockSize(team.rank), elem, [&](size_t at, size_t n) {
      reduceInOrder(mappedInputs(*ranks, own + at), n, sum, args);
      for (int step = 1; step <= team.nranks; ++step)
        copyBytes((*ranks)[(team.rank + step) % team.nranks].recv + own + at, sum, n * elem);
    });
  } else {
    char* sum = postedScratch(team);
    const size_t chunk = kScratchChunkBytes / elem, mine = blocks.blockSize(team.rank);
    for (size_t at = 0; at < mine; at += chunk) {
      const size_t n = std::min(chunk, mine - at), offset = own + at * elem;
      const std::vector<const char*> inputs = co_await readInputs(team, *ranks, peers, offset, n * elem, wait);
      reduceInOrder(inputs, n, sum, args);
      co_await writeToAll(team, *ranks, peers, sum, offset, n * elem, wait);
    }
  }
  co_await allPairsBarrier(team, wait);
  team.windows->countSingleCopyCall();
  co_return true;
}

}  // namespace loom

#include "collectives/registered.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "collectives/all_pairs.h"
#include "collectives/primitives.h"
#include "collectives/scratch.h"
#include "reduce/reduce.h"
#include "transport/regions.h"

namespace loom {
namespace {

// Every rank's buffers, as addresses in this process.
struct Mapped {
  const char* send;
  char* recv;
};

// Null unless every rank's whole send and receive ranges are registered.
std::optional<std::vector<Mapped>> mapAll(const Team& team, const std::vector<PeerBuffers>& peers, size_t sendBytes,
                                          size_t recvBytes) {
  std::vector<Mapped> mapped(team.nranks);
  for (int r = 0; r < team.nranks; ++r) {
    mapped[r].send = team.windows->translate(team.peerOf(r), reinterpret_cast<uintptr_t>(peers[r].send), sendBytes);
    mapped[r].recv = team.windows->translate(team.peerOf(r), reinterpret_cast<uintptr_t>(peers[r].recv), recvBytes);
    if (mapped[r].send == nullptr || mapped[r].recv == nullptr) return std::nullopt;
  }
  return mapped;
}

// out = in_0 op in_1 op ... op in_{P-1} over `count` elements starting at
// byte `offset` of every rank's input, in rank order (the result does not
// depend on which rank computes it), then divided for avg.
void reduceChunk(const std::vector<Mapped>& ranks, size_t offset, size_t count, char* out, const CollectiveArgs& args) {
  const int n = static_cast<int>(ranks.size());
  reduceArrays(out, ranks[0].send + offset, ranks[1].send + offset, count, args.dtype, args.op);
  for (int r = 2; r < n; ++r) reduceArrays(out, out, ranks[r].send + offset, count, args.dtype, args.op);
  if (args.op == loomAvg) divideArray(out, count, args.dtype, n);
}

// Chunks of at most a scratch buffer, so what a step writes twice (or reads
// twice) comes from cache the second time.
template <typename Step>
void inChunks(size_t count, size_t elem, const Step& step) {
  const size_t chunk = kScratchChunkBytes / elem;
  for (size_t at = 0; at < count; at += chunk) step(at * elem, std::min(chunk, count - at));
}

}  // namespace

bool registeredWindowsExist(const Team& team) {
  return team.nranks > 1 && team.windows != nullptr && team.windows->anyMapped();
}

Task<bool> registeredReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                                   const std::vector<PeerBuffers>& peers) {
  const size_t elem = loomTypeSize(args.dtype);
  const size_t blockBytes = args.count * elem;
  auto ranks = mapAll(team, peers, blockBytes * team.nranks, blockBytes);
  if (!ranks) co_return false;
  char* out = (*ranks)[team.rank].recv;
  const size_t own = team.rank * blockBytes;
  // Through the accumulator: in place, out is this rank's input block, which
  // a direct reduction would overwrite before reading it.
  char* sum = threadScratch().accumulator();
  inChunks(args.count, elem, [&](size_t at, size_t n) {
    reduceChunk(*ranks, own + at, n, sum, args);
    copyBytes(out + at, sum, n * elem);
  });
  co_await allPairsBarrier(team, wait);
  team.windows->countSingleCopyCall();
  co_return true;
}

Task<bool> registeredAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                               const std::vector<PeerBuffers>& peers) {
  const size_t elem = loomTypeSize(args.dtype);
  const size_t blockBytes = args.count * elem;
  auto ranks = mapAll(team, peers, blockBytes, blockBytes * team.nranks);
  if (!ranks) co_return false;
  const char* in = (*ranks)[team.rank].send;
  const size_t own = team.rank * blockBytes;
  inChunks(args.count, elem, [&](size_t at, size_t n) {
    // Starting with the next rank spreads the ranks' writes over the peers.
    for (int step = 1; step <= team.nranks; ++step)
      copyBytes((*ranks)[(team.rank + step) % team.nranks].recv + own + at, in + at, n * elem);
  });
  co_await allPairsBarrier(team, wait);
  team.windows->countSingleCopyCall();
  co_return true;
}

Task<bool> registeredAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                               const std::vector<PeerBuffers>& peers) {
  const size_t elem = loomTypeSize(args.dtype);
  const size_t bytes = args.count * elem;
  auto ranks = mapAll(team, peers, bytes, bytes);
  if (!ranks) co_return false;
  EvenSplit blocks{args.count, team.nranks};
  const size_t own = blocks.blockOffset(team.rank) * elem;
  char* sum = threadScratch().accumulator();
  inChunks(blocks.blockSize(team.rank), elem, [&](size_t at, size_t n) {
    reduceChunk(*ranks, own + at, n, sum, args);
    for (int step = 1; step <= team.nranks; ++step)
      copyBytes((*ranks)[(team.rank + step) % team.nranks].recv + own + at, sum, n * elem);
  });
  co_await allPairsBarrier(team, wait);
  team.windows->countSingleCopyCall();
  co_return true;
}

}  // namespace loom

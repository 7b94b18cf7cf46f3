// The direct algorithms (see direct.h). Every one has the same shape:
//   1. swap buffer addresses (and the call, so mismatched arguments fail
//      here with both calls named instead of reading out of bounds);
//   2. read from peers, each rank only what it needs;
//   3. a barrier, so no rank returns, and reuses its buffers, while a peer
//      still reads them.
// AllReduce is ReduceScatter into each rank's own block of the output, a
// barrier (every block done), then AllGather of the blocks.
#include "collectives/direct.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "base/dtype_size.h"
#include "base/error.h"
#include "collectives/address_swap.h"
#include "collectives/all_pairs.h"
#include "collectives/primitives.h"
#include "collectives/scratch.h"
#include "reduce/reduce.h"

namespace loom {
namespace {

// out[i] = in_0[i] op in_1[i] op ... op in_{P-1}[i], in rank order (so the
// result is the same whichever rank computes it), where in_r is rank r's send
// buffer from byte `offset` on. out may be this rank's own input (in place).
// Peers' chunks are posted transfers; the partial sums live in the team's
// scratch, which outlasts the waits for them (a thread's would not: it may
// run another communicator's schedule meanwhile).
Task<> reduceFromAll(const Team& team, const std::vector<PeerBuffers>& peers, size_t offset, size_t count, char* out,
                     const CollectiveArgs& args, const WaitContext& wait) {
  PeerMemory& memory = *team.peerMemory();
  const size_t elem = dtypeSize(args.dtype);
  const size_t chunk = kScratchChunkBytes / elem;
  std::vector<char>& scratch = team.reduceScratch;
  if (scratch.size() < 2 * kScratchChunkBytes) scratch.resize(2 * kScratchChunkBytes);
  char* accumulator = scratch.data();
  char* incoming = scratch.data() + kScratchChunkBytes;
  const int last = team.nranks - 1;
  for (size_t at = 0; at < count; at += chunk) {
    const size_t n = std::min(chunk, count - at);
    const size_t bytes = n * elem;
    const size_t from = offset + at * elem;
    // Rank r's chunk: in place when possible, else posted into `into`.
    auto input = [&](int r, char* into) -> const void* {
      const char* remote = peers[r].send + from;
      if (r == team.rank) return remote;
      if (const void* direct = memory.inPlace(team.peerOf(r), remote)) return direct;
      memory.postRead(team.peerOf(r), remote, into, bytes, wait);
      return into;
    };
    const void* sum = input(0, accumulator);
    for (int r = 1; r < last; ++r) {
      const void* next = input(r, incoming);
      co_await TransfersDone{memory.completions(), wait};
      reduceArrays(accumulator, sum, next, n, args.dtype, args.op);
      sum = accumulator;
    }
    char* dst = out + at * elem;
    const void* next = input(last, incoming);
    co_await TransfersDone{memory.completions(), wait};
    reduceArrays(dst, sum, next, n, args.dtype, args.op);
    if (args.op == loomAvg) divideArray(dst, n, args.dtype, team.nranks);
  }
}

struct Block {
  const char* remote;
  size_t offset;
  size_t bytes;
};

// Copies every peer's block (where blockOf(peer) says) into out, starting
// with the next rank so that ranks spread their reads over the peers.
template <typename BlockOf>
Task<> gatherFromAll(const Team& team, BlockOf blockOf, char* out, const WaitContext& wait) {
  PeerMemory& memory = *team.peerMemory();
  for (int step = 1; step < team.nranks; ++step) {
    const int peer = (team.rank + step) % team.nranks;
    auto [remote, offset, bytes] = blockOf(peer);
    memory.postRead(team.peerOf(peer), remote, out + offset, bytes, wait);
  }
  co_await TransfersDone{memory.completions(), wait};
}

}  // namespace

Task<> directReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                           const std::vector<PeerBuffers>& peers) {
  const size_t blockBytes = args.count * dtypeSize(args.dtype);
  co_await reduceFromAll(team, peers, team.rank * blockBytes, args.count, static_cast<char*>(args.recvbuf), args, wait);
  co_await allPairsBarrier(team, wait);
}

Task<> directAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                       const std::vector<PeerBuffers>& peers) {
  const size_t blockBytes = args.count * dtypeSize(args.dtype);
  char* out = static_cast<char*>(args.recvbuf);
  copyBytes(out + team.rank * blockBytes, args.sendbuf, blockBytes);
  co_await gatherFromAll(
      team,
      [&](int peer) {
        return Block{peers[peer].send, peer * blockBytes, blockBytes};
      },
      out, wait);
  co_await allPairsBarrier(team, wait);
}

Task<> directAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                       const std::vector<PeerBuffers>& peers) {
  const size_t elem = dtypeSize(args.dtype);
  EvenSplit blocks{args.count, team.nranks};
  char* out = static_cast<char*>(args.recvbuf);
  const size_t own = blocks.blockOffset(team.rank) * elem;
  co_await reduceFromAll(team, peers, own, blocks.blockSize(team.rank), out + own, args, wait);
  // In place, gathering overwrites the input blocks peers are still reducing.
  co_await allPairsBarrier(team, wait);
  co_await gatherFromAll(
      team,
      [&](int peer) {
        const size_t offset = blocks.blockOffset(peer) * elem;
        return Block{peers[peer].recv + offset, offset, blocks.blockSize(peer) * elem};
      },
      out, wait);
  co_await allPairsBarrier(team, wait);
}

}  // namespace loom

// Bruck's AllGather: ceil(log2 P) steps on any rank count, where the ring
// takes P-1. Ranks work in ring positions (distance 1 is a ring neighbour).
// A rank keeps the blocks it has in a scratch buffer in relative order:
// entry j is the block of the rank j positions ahead of it. At step k it
// sends its first min(2^k, P - 2^k) entries to the rank 2^k positions
// behind and receives as many from the rank 2^k positions ahead, which
// are exactly its entries 2^k onwards; after the last step every entry is
// there and each goes to its rank's place in the output. Every rank moves
// (P-1) blocks, as on the ring, in log2(P) messages instead of P-1: for
// small blocks at many ranks, where the ring's steps cost more than its
// bytes.
#include <algorithm>

#include "base/dtype_size.h"
#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {

Task<> bruckAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const size_t blockBytes = args.count * dtypeSize(args.dtype);
  char* out = static_cast<char*>(args.recvbuf);
  const int n = team.nranks;
  const int p = team.ringPosition;
  // Read the input before any write to the output: in place, it is the
  // output's block of this rank.
  std::vector<char>& relative = team.reduceScratch;
  relative.resize(static_cast<size_t>(n) * blockBytes);
  prims.copy(relative.data(), args.sendbuf, blockBytes);
  const size_t chunk = prims.chunkElements(team.slotBytes);
  for (int distance = 1; distance < n; distance *= 2) {
    SendConnection& behind = team.sendTo(team.ringRank(p - distance));
    RecvConnection& ahead = team.recvFrom(team.ringRank(p + distance));
    // Entries [0, blocks) go out, entries [distance, distance + blocks)
    // come in: both ranges are contiguous in elements.
    const size_t elements = static_cast<size_t>(std::min(distance, n - distance)) * args.count;
    char* incoming = relative.data() + static_cast<size_t>(distance) * blockBytes;
    // A chunk out, then a chunk in: every rank does the same, so each
    // FIFO needs one free slot, whatever the size.
    for (size_t start = 0; start < elements; start += chunk) {
      const size_t len = std::min(chunk, elements - start);
      const size_t at = start * prims.elementSize();
      co_await prims.send(behind, relative.data() + at, len);
      co_await prims.recv(ahead, incoming + at, len);
    }
  }
  for (int j = 0; j < n; ++j)
    prims.copy(out + static_cast<size_t>(team.ringRank(p + j)) * blockBytes,
               relative.data() + static_cast<size_t>(j) * blockBytes, blockBytes);
}

}  // namespace loom

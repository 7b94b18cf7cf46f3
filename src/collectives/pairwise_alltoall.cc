// AllToAll as n-1 pairwise exchanges: in step k rank r sends to r+k and
// receives from r-k. Sends and receives alternate chunk by chunk, so no rank
// can fill a FIFO its peer is not yet draining (no deadlock however large
// the blocks).
#include <algorithm>
#include <cstring>
#include <vector>

#include "collectives/collectives.h"
#include "collectives/primitives.h"

namespace loom {

Task<> pairwiseAllToAll(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const int n = team.nranks;
  const size_t blockBytes = args.count * prims.elementSize();
  const char* in = static_cast<const char*>(args.sendbuf);
  char* out = static_cast<char*>(args.recvbuf);
  // In place, each received block would overwrite one not sent yet: send
  // from a copy. (An allocation, but once per call, not per chunk.)
  std::vector<char> staging;
  if (in == out && n > 1) {
    staging.assign(in, in + blockBytes * n);
    in = staging.data();
  }
  prims.copy(out + blockBytes * team.rank, in + blockBytes * team.rank, blockBytes);

  for (int k = 1; k < n; ++k) {
    const int to = (team.rank + k) % n;
    const int from = (team.rank - k + n) % n;
    SendConnection& sendConn = team.sendTo(to);
    RecvConnection& recvConn = team.recvFrom(from);
    const size_t chunk = prims.chunkElements(team.slotBytes);
    for (size_t start = 0; start < args.count; start += chunk) {
      const size_t len = std::min(chunk, args.count - start);
      const size_t at = start * prims.elementSize();
      co_await prims.send(sendConn, in + blockBytes * to + at, len);
      co_await prims.recv(recvConn, out + blockBytes * from + at, len);
    }
  }
}

}  // namespace loom

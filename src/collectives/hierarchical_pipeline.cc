#include "collectives/hierarchical_pipeline.h"

#include <algorithm>

#include "base/dtype_size.h"
#include "collectives/executor.h"
#include "collectives/primitives.h"

namespace loom {
namespace {

// Segment `index` of every block, `segment` elements of each (fewer, or
// none, where a block ends sooner).
BlockLayout segmentOf(const BlockLayout& blocks, size_t index, size_t segment) {
  BlockLayout part;
  const size_t start = index * segment;
  for (size_t i = 0; i < blocks.size.size(); ++i) {
    const size_t size = blocks.size[i];
    part.offset.push_back(blocks.offset[i] + std::min(start, size));
    part.size.push_back(start < size ? std::min(segment, size - start) : 0);
  }
  return part;
}

// The peer lane's partial reduction combined with this lane's in place, the
// operand of the lane's lower team index first on both hosts, so both get
// bitwise the same result (min and max of a NaN depend on the order).
Task<> combineSegment(const Team& across, char* data, size_t count, const CollectiveArgs& args, loomRedOp_t op,
                      Primitives& prims, const WaitContext& wait) {
  const Executor& exec = executorFor(args.memory);
  RecvConnection& from = across.recvFrom(1 - across.rank);
  const size_t chunk = prims.chunkElements(across.slotBytes);
  for (size_t start = 0; start < count; start += chunk) {
    const size_t n = std::min(chunk, count - start);
    char* mine = data + start * prims.elementSize();
    const void* theirs = co_await from.acquire(wait, n * prims.elementSize());
    if (across.rank == 0)
      exec.reduce(mine, mine, theirs, n, args.dtype, op);
    else
      exec.reduce(mine, theirs, mine, n, args.dtype, op);
    from.release();
  }
}

}  // namespace

size_t halfFifoBytes(const SlotShape& shape) {
  return shape.slots < 2 ? 0 : static_cast<size_t>(shape.slots / 2) * shape.bytes;
}

size_t twoHostSegmentBytes(const Team& team) {
  if (team.hosts != 2 || team.connections == nullptr) return 0;
  const int lanes = team.fewestRanksOnAHost;
  // Every rank of both hosts must cut the same segments: from every lane's
  // link as all ranks see it, the fewest bytes half a FIFO holds.
  const std::vector<std::vector<int>>& hosts = team.membersByHost();
  size_t bytes = SIZE_MAX;
  for (int i = 0; i < lanes; ++i) {
    const size_t half =
        halfFifoBytes(team.connections->slotShapeBetween(team.peerOf(hosts[0][i]), team.peerOf(hosts[1][i])));
    if (half == 0) return 0;
    bytes = std::min(bytes, half);
  }
  // A segment of a lane is cut into messages of the lane team's slot (at
  // most the link's), so it takes at most half the FIFO's slots.
  return bytes;
}

// Segment c: the host's ranks reduce-scatter it over shared memory, and each
// lane posts its partial to the other host's lane; then the lanes combine
// segment c-1, which crossed the link meanwhile, and the host's ranks gather
// it. Posting c needs room for two segments: the peer lane takes c-2 in its
// step c-1, right after posting c-1, waiting on nothing later from this
// lane; with room for one, both lanes could wait to post c with c-1
// unread. So a segment is half the FIFO.
Task<> pipelinedTwoHostAllReduce(const Team& team, const CollectiveArgs& args, const BlockLayout& blocks, int lanes,
                                 size_t segment, const WaitContext& wait) {
  const Team& host = team.hostTeam();
  const bool lane = host.rank < lanes;
  const Team* across = lane ? &team.localIndexTeam() : nullptr;
  const loomRedOp_t op = args.op == loomAvg ? loomSum : args.op;
  const size_t elementSize = dtypeSize(args.dtype);
  Primitives prims(wait, args.dtype, op, 2, args.memory);
  char* out = static_cast<char*>(args.recvbuf);
  const size_t segments = (blocks.largest() + segment - 1) / segment;

  for (size_t c = 0; c <= segments; ++c) {
    if (c < segments) {
      const BlockLayout part = segmentOf(blocks, c, segment);
      char* mine = out + part.offset[host.rank] * elementSize;
      co_await ringReduceScatterBlocks(host, args.sendbuf, part, mine, args.dtype, op, args.memory, wait);
      if (lane)
        co_await prims.sendAll(across->sendTo(1 - across->rank), mine, part.size[host.rank],
                               prims.chunkElements(across->slotBytes));
    }
    if (c > 0) {
      const BlockLayout part = segmentOf(blocks, c - 1, segment);
      if (lane) {
        char* mine = out + part.offset[host.rank] * elementSize;
        co_await combineSegment(*across, mine, part.size[host.rank], args, op, prims, wait);
        if (args.op == loomAvg) executorFor(args.memory).divide(mine, part.size[host.rank], args.dtype, team.nranks);
      }
      co_await ringAllGatherBlocks(host, args.recvbuf, part, args.dtype, args.memory, wait);
    }
  }
}

}  // namespace loom

// The chunk loop of ring_reduce_scatter.cc and ring_allgather.cc, over
// blocks of one buffer. Blocks may differ in size, so in the last chunks
// some have nothing left: both ends of every connection compute the same
// length for the same block, so such a step posts an empty slot on one side
// and takes it on the other.
#include "collectives/ring_blocks.h"

#include <algorithm>

#include "collectives/primitives.h"

namespace loom {
namespace {

// Block `index`'s part of the chunk that starts `start` elements into every block.
struct ChunkOfBlocks {
  const BlockLayout& blocks;
  size_t start;
  size_t chunk;
  size_t elementSize;
  size_t length(int index) const {
    const size_t size = blocks.size[index];
    return start < size ? std::min(chunk, size - start) : 0;
  }
  size_t byteOffset(int index) const { return (blocks.offset[index] + start) * elementSize; }
};

}  // namespace

BlockLayout BlockLayout::even(size_t total, int parts) {
  const EvenSplit split{total, parts};
  BlockLayout layout;
  for (int i = 0; i < parts; ++i) {
    layout.offset.push_back(split.blockOffset(i));
    layout.size.push_back(split.blockSize(i));
  }
  return layout;
}

BlockLayout BlockLayout::at(const std::vector<int>& at, size_t size) {
  BlockLayout layout;
  for (int place : at) {
    layout.offset.push_back(static_cast<size_t>(place) * size);
    layout.size.push_back(size);
  }
  return layout;
}

size_t BlockLayout::largest() const {
  return size.empty() ? 0 : *std::max_element(size.begin(), size.end());
}

Task<> ringReduceScatterBlocks(const Team& team, const void* in, const BlockLayout& blocks, void* result,
                               loomDataType_t dtype, loomRedOp_t op, MemoryKind memory, const WaitContext& wait) {
  Primitives prims(wait, dtype, op, team.nranks, memory);
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(result);
  ChunkOfBlocks part{blocks, 0, 0, prims.elementSize()};
  if (team.nranks == 1) {
    prims.copy(dst, src + part.byteOffset(0), blocks.size[0] * part.elementSize);
    co_return;
  }
  SendConnection& next = team.next();
  RecvConnection& prev = team.prev();
  const int n = team.nranks;
  const int p = team.ringPosition;
  part.chunk = prims.chunkElements(team.slotBytes);
  for (; part.start < blocks.largest(); part.start += part.chunk) {
    int block = team.ringRank(p - 1);
    co_await prims.send(next, src + part.byteOffset(block), part.length(block));
    for (int step = 1; step < n - 1; ++step) {
      block = team.ringRank(p - 1 - step);
      co_await prims.recvReduceSend(prev, next, src + part.byteOffset(block), part.length(block));
    }
    block = team.rank;
    co_await prims.recvReduce(prev, src + part.byteOffset(block), dst + part.start * part.elementSize,
                              part.length(block));
  }
}

Task<> ringAllGatherBlocks(const Team& team, void* buf, const BlockLayout& blocks, loomDataType_t dtype,
                           MemoryKind memory, const WaitContext& wait) {
  if (team.nranks == 1) co_return;
  Primitives prims(wait, dtype, loomSum, team.nranks, memory);
  char* data = static_cast<char*>(buf);
  SendConnection& next = team.next();
  RecvConnection& prev = team.prev();
  const int n = team.nranks;
  const int p = team.ringPosition;
  ChunkOfBlocks part{blocks, 0, prims.chunkElements(team.slotBytes), prims.elementSize()};
  for (; part.start < blocks.largest(); part.start += part.chunk) {
    int block = team.rank;
    co_await prims.send(next, data + part.byteOffset(block), part.length(block));
    for (int step = 1; step < n - 1; ++step) {
      block = team.ringRank(p - step);
      co_await prims.recvCopySend(prev, next, data + part.byteOffset(block), part.length(block));
    }
    block = team.ringRank(p + 1);
    co_await prims.recv(prev, data + part.byteOffset(block), part.length(block));
  }
}

}  // namespace loom

// The steps every algorithm is built from. Each moves one chunk (at most one
// slot) and reads the incoming slot in place / writes the outgoing slot
// directly: a ring step is one pass over memory, never a detour through a
// temporary buffer. Each is a coroutine: it waits for its slots with
// co_await, so a schedule parks where a connection cannot move yet.
#pragma once

#include <loom/loom.h>

#include <cstddef>

#include "base/task.h"
#include "collectives/executor.h"
#include "transport/connection.h"
#include "transport/wait_context.h"

namespace loom {

class Primitives {
 public:
  // `memory`: where the call's buffers live, which chooses the executor
  // its copies and reductions run on (executor.h).
  Primitives(const WaitContext& wait, loomDataType_t dtype, loomRedOp_t op, int nranks, MemoryKind memory);

  // Elements that fit in one slot of `connectionSlotBytes`.
  size_t chunkElements(size_t connectionSlotBytes) const { return connectionSlotBytes / elementSize_; }
  size_t elementSize() const { return elementSize_; }

  Task<> send(SendConnection& to, const void* src, size_t count);
  Task<> recv(RecvConnection& from, void* dst, size_t count);
  // `count` elements of any length, `chunk` (chunkElements) a message.
  Task<> sendAll(SendConnection& to, const void* src, size_t count, size_t chunk);
  Task<> recvAll(RecvConnection& from, void* dst, size_t count, size_t chunk);
  Task<> recvReduceSend(RecvConnection& from, SendConnection& to, const void* local, size_t count);
  // Final reduction step: dst = incoming (op) local, divided by nranks for avg.
  Task<> recvReduceCopy(RecvConnection& from, const void* local, void* dst, size_t count);
  // A step before the final one: dst = incoming (op) local (dst may be local).
  Task<> recvReduce(RecvConnection& from, const void* local, void* dst, size_t count);
  Task<> recvReduceCopySend(RecvConnection& from, SendConnection& to, const void* local, void* dst, size_t count);
  Task<> recvCopySend(RecvConnection& from, SendConnection& to, void* dst, size_t count);

  // dst = src, finished for avg as a one-rank reduction would be.
  void localReduceCopy(const void* src, void* dst, size_t count);

  // The steps' arithmetic, on this call's executor, for an algorithm's
  // work between primitives too: dst = src (dst may be src); dst = a op b
  // for `count` elements.
  void copy(void* dst, const void* src, size_t bytes) const { executor_.copy(dst, src, bytes); }
  void reduce(void* dst, const void* a, const void* b, size_t count) const {
    executor_.reduce(dst, a, b, count, dtype_, op_);
  }

 private:
  void finishAverage(void* data, size_t count);

  // Steps that write one chunk twice do it in pieces this size (a multiple
  // of every element size) so the second write reads from cache.
  static constexpr size_t kCachePieceBytes = 32 * 1024;

  const WaitContext& wait_;
  const Executor& executor_;
  loomDataType_t dtype_;
  loomRedOp_t op_;
  int nranks_;
  size_t elementSize_;
};

}  // namespace loom

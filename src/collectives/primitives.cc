#include "collectives/primitives.h"

#include <algorithm>
#include <cstring>

#include "base/dtype_size.h"

namespace loom {

Primitives::Primitives(const WaitContext& wait, loomDataType_t dtype, loomRedOp_t op, int nranks, MemoryKind memory)
    : wait_(wait),
      executor_(executorFor(memory)),
      dtype_(dtype),
      op_(op),
      nranks_(nranks),
      elementSize_(dtypeSize(dtype)) {}

void Primitives::finishAverage(void* data, size_t count) {
  if (op_ == loomAvg && nranks_ > 1) executor_.divide(data, count, dtype_, nranks_);
}

Task<> Primitives::send(SendConnection& to, const void* src, size_t count) {
  void* slot = co_await to.acquire(wait_);
  to.postFrom(slot, src, count * elementSize_);
}

Task<> Primitives::recv(RecvConnection& from, void* dst, size_t count) {
  const void* slot = co_await from.acquire(wait_, count * elementSize_);
  copy(dst, slot, count * elementSize_);
  from.release();
}

Task<> Primitives::sendAll(SendConnection& to, const void* src, size_t count, size_t chunk) {
  const char* bytes = static_cast<const char*>(src);
  for (size_t at = 0; at < count; at += chunk)
    co_await send(to, bytes + at * elementSize_, std::min(chunk, count - at));
}

Task<> Primitives::recvAll(RecvConnection& from, void* dst, size_t count, size_t chunk) {
  char* bytes = static_cast<char*>(dst);
  for (size_t at = 0; at < count; at += chunk)
    co_await recv(from, bytes + at * elementSize_, std::min(chunk, count - at));
}

Task<> Primitives::recvReduceSend(RecvConnection& from, SendConnection& to, const void* local, size_t count) {
  const void* in = co_await from.acquire(wait_, count * elementSize_);
  void* out = co_await to.acquire(wait_);
  reduce(out, in, local, count);
  to.post(count * elementSize_);
  from.release();
}

Task<> Primitives::recvReduceCopy(RecvConnection& from, const void* local, void* dst, size_t count) {
  const void* in = co_await from.acquire(wait_, count * elementSize_);
  reduce(dst, in, local, count);
  from.release();
  finishAverage(dst, count);
}

Task<> Primitives::recvReduce(RecvConnection& from, const void* local, void* dst, size_t count) {
  const void* in = co_await from.acquire(wait_, count * elementSize_);
  reduce(dst, in, local, count);
  from.release();
}

// The reduced chunk goes to the next rank's slot and to the user's buffer.
// Working in cache-sized pieces makes the second write read the first from
// cache, so memory sees one pass: read two inputs, write two outputs.
Task<> Primitives::recvReduceCopySend(RecvConnection& from, SendConnection& to, const void* local, void* dst,
                                      size_t count) {
  const char* in = static_cast<const char*>(co_await from.acquire(wait_, count * elementSize_));
  char* out = static_cast<char*>(co_await to.acquire(wait_));
  if (to.sendsFromSource()) {  // one write, to the user's buffer, which is then sent from
    reduce(dst, in, local, count);
    finishAverage(dst, count);
    from.release();
    to.postFrom(out, dst, count * elementSize_);
    co_return;
  }
  const size_t piece = kCachePieceBytes / elementSize_;
  for (size_t at = 0; at < count; at += piece) {
    const size_t n = std::min(piece, count - at);
    const size_t offset = at * elementSize_;
    reduce(out + offset, in + offset, static_cast<const char*>(local) + offset, n);
    finishAverage(out + offset, n);
    copy(static_cast<char*>(dst) + offset, out + offset, n * elementSize_);
  }
  from.release();
  to.post(count * elementSize_);
}

Task<> Primitives::recvCopySend(RecvConnection& from, SendConnection& to, void* dst, size_t count) {
  const char* in = static_cast<const char*>(co_await from.acquire(wait_, count * elementSize_));
  char* out = static_cast<char*>(co_await to.acquire(wait_));
  const size_t bytes = count * elementSize_;
  if (to.sendsFromSource()) {
    copy(dst, in, bytes);
    from.release();
    to.postFrom(out, dst, bytes);
    co_return;
  }
  for (size_t offset = 0; offset < bytes; offset += kCachePieceBytes) {
    const size_t n = std::min(kCachePieceBytes, bytes - offset);
    copy(out + offset, in + offset, n);
    copy(static_cast<char*>(dst) + offset, in + offset, n);
  }
  from.release();
  to.post(bytes);
}

void Primitives::localReduceCopy(const void* src, void* dst, size_t count) {
  copy(dst, src, count * elementSize_);
  finishAverage(dst, count);
}

}  // namespace loom

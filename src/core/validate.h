// Argument checks shared by the C API entry points. Each throws
// loom::Error(loomInvalidArgument) with a sentence that starts with the API
// name and says what was wrong.
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <cstdint>

#include "base/dtype_size.h"
#include "collectives/collectives.h"

namespace loom {

// What each check below throws: out of line and cold, so that the checks,
// on every call's path, inline to a compare and a branch.
namespace refuse {
[[noreturn, gnu::cold]] void dtype(const char* api, loomDataType_t dtype);
[[noreturn, gnu::cold]] void op(const char* api, loomRedOp_t op);
[[noreturn, gnu::cold]] void stream(const char* api);
[[noreturn, gnu::cold]] void overflow(const char* api, size_t count, loomDataType_t dtype, size_t multiplier);
[[noreturn, gnu::cold]] void nullBuffer(const char* api, const char* name, size_t bytes);
[[noreturn, gnu::cold]] void rank(const char* api, const char* name, int value, int nranks);
[[noreturn, gnu::cold]] void overlap(const char* api, bool sendInsideRecv, size_t inPlaceOffset);
}  // namespace refuse

inline void checkDtype(const char* api, loomDataType_t dtype) {
  if (dtypeSize(dtype) == 0) refuse::dtype(api, dtype);
}
inline void checkOp(const char* api, loomRedOp_t op) {
  if (static_cast<unsigned>(op) >= LOOM_NUM_OPS) refuse::op(api, op);
}
inline void checkStream(const char* api, const void* stream) {
  if (stream != nullptr) refuse::stream(api);
}
// count elements times `multiplier` (nranks for AllGather's output, ...), in
// bytes, refusing sizes that overflow (or reach 2^62, so that pointer
// arithmetic on them cannot wrap either).
inline size_t checkedBytes(const char* api, size_t count, loomDataType_t dtype, size_t multiplier) {
  size_t elements = 0, bytes = 0;
  if (__builtin_mul_overflow(count, multiplier, &elements) ||
      __builtin_mul_overflow(elements, dtypeSize(dtype), &bytes) || bytes > (SIZE_MAX >> 2))
    refuse::overflow(api, count, dtype, multiplier);
  return bytes;
}
inline void checkBuffer(const char* api, const char* name, const void* buffer, size_t bytes) {
  if (buffer == nullptr && bytes > 0) refuse::nullBuffer(api, name, bytes);
}
inline void checkRank(const char* api, const char* name, int value, int nranks) {
  if (value < 0 || value >= nranks) refuse::rank(api, name, value, nranks);
}
// Buffers may be identical in the API's in-place form only (inPlaceOffset
// bytes into the larger one); any other overlap would silently corrupt data.
inline void checkOverlap(const char* api, const void* sendbuf, size_t sendBytes, const void* recvbuf, size_t recvBytes,
                         bool sendInsideRecv, size_t inPlaceOffset) {
  if (sendBytes == 0 || recvBytes == 0) return;
  const auto s = reinterpret_cast<uintptr_t>(sendbuf), r = reinterpret_cast<uintptr_t>(recvbuf);
  if (!(s < r + recvBytes && r < s + sendBytes)) return;
  if (sendInsideRecv ? s != r + inPlaceOffset : r != s + inPlaceOffset)
    refuse::overlap(api, sendInsideRecv, inPlaceOffset);
}

// AllToAllv's arrays (nranks entries each, in elements): present, without
// overflow, buffers present where a count is not 0, this rank's own block
// the same size both ways, and the used ranges of the two buffers apart.
VariableBlocks checkVariableBlocks(const char* api, const void* sendbuf, const size_t* sendcounts,
                                   const size_t* sdispls, const void* recvbuf, const size_t* recvcounts,
                                   const size_t* rdispls, loomDataType_t dtype, int nranks, int rank);

}  // namespace loom

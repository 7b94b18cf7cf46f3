#include "core/validate.h"

#include <cstdint>
#include <string>

#include "base/error.h"

namespace loom {

void checkDtype(const char* api, loomDataType_t dtype) {
  if (loomTypeSize(dtype) == 0)
    fail(loomInvalidArgument, std::string(api) + ": dtype " + std::to_string(static_cast<int>(dtype)) +
                                  " is not a loomDataType_t (0 to " + std::to_string(LOOM_NUM_DTYPES - 1) + ")");
}

void checkOp(const char* api, loomRedOp_t op) {
  if (static_cast<unsigned>(op) >= LOOM_NUM_OPS)
    fail(loomInvalidArgument, std::string(api) + ": op " + std::to_string(static_cast<int>(op)) +
                                  " is not a loomRedOp_t (0 to " + std::to_string(LOOM_NUM_OPS - 1) + ")");
}

void checkStream(const char* api, const void* stream) {
  if (stream != nullptr)
    fail(loomUnsupported, std::string(api) +
                              ": stream must be NULL: this Loom works on host buffers only (CUDA streams come "
                              "with device-buffer support)");
}

size_t checkedBytes(const char* api, size_t count, loomDataType_t dtype, size_t multiplier) {
  size_t elements = 0, bytes = 0;
  // Keep sizes below 2^62 too, so pointer arithmetic on them cannot wrap.
  if (__builtin_mul_overflow(count, multiplier, &elements) ||
      __builtin_mul_overflow(elements, loomTypeSize(dtype), &bytes) || bytes > (SIZE_MAX >> 2))
    fail(loomInvalidArgument, std::string(api) + ": count " + std::to_string(count) + " of " + loomTypeName(dtype) +
                                  (multiplier > 1 ? " times " + std::to_string(multiplier) + " ranks" : "") +
                                  " overflows the address space");
  return bytes;
}

void checkBuffer(const char* api, const char* name, const void* buffer, size_t bytes) {
  if (buffer == nullptr && bytes > 0)
    fail(loomInvalidArgument,
         std::string(api) + ": " + name + " is NULL but " + std::to_string(bytes) + " bytes are to go through it");
}

void checkRank(const char* api, const char* name, int value, int nranks) {
  if (value < 0 || value >= nranks)
    fail(loomInvalidArgument, std::string(api) + ": " + name + " " + std::to_string(value) +
                                  " is not a rank of this communicator (0 to " + std::to_string(nranks - 1) + ")");
}

void checkOverlap(const char* api, const void* sendbuf, size_t sendBytes, const void* recvbuf, size_t recvBytes,
                  bool sendInsideRecv, size_t inPlaceOffset) {
  if (sendBytes == 0 || recvBytes == 0) return;
  auto s = reinterpret_cast<uintptr_t>(sendbuf), r = reinterpret_cast<uintptr_t>(recvbuf);
  bool overlap = s < r + recvBytes && r < s + sendBytes;
  if (!overlap) return;
  bool inPlace = sendInsideRecv ? s == r + inPlaceOffset : r == s + inPlaceOffset;
  if (!inPlace)
    fail(loomInvalidArgument, std::string(api) + ": sendbuf and recvbuf overlap but not in the in-place form (" +
                                  (sendInsideRecv ? "sendbuf == recvbuf + " : "recvbuf == sendbuf + ") +
                                  std::to_string(inPlaceOffset) + " bytes); the result would be corrupt");
}

}  // namespace loom

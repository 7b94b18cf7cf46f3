#include "core/validate.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/dtype_size.h"
#include "base/error.h"

namespace loom {

namespace refuse {

void dtype(const char* api, loomDataType_t dtype) {
  fail(loomInvalidArgument, std::string(api) + ": dtype " + std::to_string(static_cast<int>(dtype)) +
                                " is not a loomDataType_t (0 to " + std::to_string(LOOM_NUM_DTYPES - 1) + ")");
}

void op(const char* api, loomRedOp_t op) {
  fail(loomInvalidArgument, std::string(api) + ": op " + std::to_string(static_cast<int>(op)) +
                                " is not a loomRedOp_t (0 to " + std::to_string(LOOM_NUM_OPS - 1) + ")");
}

void stream(const char* api) {
  fail(loomUnsupported, std::string(api) +
                            ": stream must be NULL: this Loom works on host buffers only (CUDA streams come "
                            "with device-buffer support)");
}

void overflow(const char* api, size_t count, loomDataType_t dtype, size_t multiplier) {
  fail(loomInvalidArgument, std::string(api) + ": count " + std::to_string(count) + " of " + loomTypeName(dtype) +
                                (multiplier > 1 ? " times " + std::to_string(multiplier) + " ranks" : "") +
                                " overflows the address space");
}

void nullBuffer(const char* api, const char* name, size_t bytes) {
  fail(loomInvalidArgument,
       std::string(api) + ": " + name + " is NULL but " + std::to_string(bytes) + " bytes are to go through it");
}

void rank(const char* api, const char* name, int value, int nranks) {
  fail(loomInvalidArgument, std::string(api) + ": " + name + " " + std::to_string(value) +
                                " is not a rank of this communicator (0 to " + std::to_string(nranks - 1) + ")");
}

void overlap(const char* api, bool sendInsideRecv, size_t inPlaceOffset) {
  fail(loomInvalidArgument, std::string(api) + ": sendbuf and recvbuf overlap but not in the in-place form (" +
                                (sendInsideRecv ? "sendbuf == recvbuf + " : "recvbuf == sendbuf + ") +
                                std::to_string(inPlaceOffset) + " bytes); the result would be corrupt");
}

}  // namespace refuse

VariableBlocks checkVariableBlocks(const char* api, const void* sendbuf, const size_t* sendcounts,
                                   const size_t* sdispls, const void* recvbuf, const size_t* recvcounts,
                                   const size_t* rdispls, loomDataType_t dtype, int nranks, int rank) {
  const struct {
    const char* name;
    const size_t* values;
  } arrays[] = {{"sendcounts", sendcounts}, {"sdispls", sdispls}, {"recvcounts", recvcounts}, {"rdispls", rdispls}};
  for (const auto& array : arrays)
    if (array.values == nullptr) fail(loomInvalidArgument, std::string(api) + ": " + array.name + " is NULL");
  VariableBlocks blocks;
  blocks.sendCounts.assign(sendcounts, sendcounts + nranks);
  blocks.sendDispls.assign(sdispls, sdispls + nranks);
  blocks.recvCounts.assign(recvcounts, recvcounts + nranks);
  blocks.recvDispls.assign(rdispls, rdispls + nranks);
  // Each buffer's used range, in bytes: [0, end).
  auto usedBytes = [&](const std::vector<size_t>& counts, const std::vector<size_t>& displs, const char* which) {
    size_t end = 0;
    for (int q = 0; q < nranks; ++q) {
      if (counts[q] == 0) continue;
      if (displs[q] > SIZE_MAX - counts[q])
        fail(loomInvalidArgument, std::string(api) + ": " + which + " block of rank " + std::to_string(q) +
                                      " ends past the addressable range");
      end = std::max(end, checkedBytes(api, displs[q] + counts[q], dtype, 1));
    }
    return end;
  };
  const size_t sendBytes = usedBytes(blocks.sendCounts, blocks.sendDispls, "the send");
  const size_t recvBytes = usedBytes(blocks.recvCounts, blocks.recvDispls, "the receive");
  checkBuffer(api, "sendbuf", sendbuf, sendBytes);
  checkBuffer(api, "recvbuf", recvbuf, recvBytes);
  if (blocks.sendCounts[rank] != blocks.recvCounts[rank])
    fail(loomInvalidArgument, std::string(api) + ": rank " + std::to_string(rank) + " sends itself " +
                                  std::to_string(blocks.sendCounts[rank]) + " elements but receives " +
                                  std::to_string(blocks.recvCounts[rank]) + " from itself");
  const auto s = reinterpret_cast<uintptr_t>(sendbuf), r = reinterpret_cast<uintptr_t>(recvbuf);
  if (sendBytes > 0 && recvBytes > 0 && s < r + recvBytes && r < s + sendBytes)
    fail(loomInvalidArgument, std::string(api) +
                                  ": sendbuf and recvbuf overlap; AllToAllv has no in-place form, the result "
                                  "would be corrupt");
  return blocks;
}

}  // namespace loom

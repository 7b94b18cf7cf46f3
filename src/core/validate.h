// Argument checks shared by the C API entry points. Each throws
// loom::Error(loomInvalidArgument) with a sentence that starts with the API
// name and says what was wrong.
#pragma once

#include <loom/loom.h>

#include <cstddef>

#include "collectives/collectives.h"

namespace loom {

void checkDtype(const char* api, loomDataType_t dtype);
void checkOp(const char* api, loomRedOp_t op);
void checkStream(const char* api, const void* stream);
// count elements times `multiplier` (nranks for AllGather's output, ...), in
// bytes, refusing sizes that overflow.
size_t checkedBytes(const char* api, size_t count, loomDataType_t dtype, size_t multiplier);
void checkBuffer(const char* api, const char* name, const void* buffer, size_t bytes);
void checkRank(const char* api, const char* name, int value, int nranks);
// Buffers may be identical in the API's in-place form only (inPlaceOffset
// bytes into the larger one); any other overlap would silently corrupt data.
void checkOverlap(const char* api, const void* sendbuf, size_t sendBytes, const void* recvbuf, size_t recvBytes,
                  bool sendInsideRecv, size_t inPlaceOffset);

// AllToAllv's arrays (nranks entries each, in elements): present, without
// overflow, buffers present where a count is not 0, this rank's own block
// the same size both ways, and the used ranges of the two buffers apart.
VariableBlocks checkVariableBlocks(const char* api, const void* sendbuf, const size_t* sendcounts,
                                   const size_t* sdispls, const void* recvbuf, const size_t* recvcounts,
                                   const size_t* rdispls, loomDataType_t dtype, int nranks, int rank);

}  // namespace loom

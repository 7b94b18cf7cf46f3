// Sizes and names of the C API's element types and operations.
#include <loom/loom.h>

#include "base/dtype_size.h"

extern "C" {

size_t loomTypeSize(loomDataType_t dtype) {
  return loom::dtypeSize(dtype);
}

const char* loomTypeName(loomDataType_t dtype) {
  static const char* const kNames[LOOM_NUM_DTYPES] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                                                      "uint64", "float16", "bfloat16", "float32", "float64"};
  unsigned index = static_cast<unsigned>(dtype);
  return index < LOOM_NUM_DTYPES ? kNames[index] : "unknown";
}

const char* loomOpName(loomRedOp_t op) {
  static const char* const kNames[LOOM_NUM_OPS] = {"sum", "prod", "max", "min", "avg"};
  unsigned index = static_cast<unsigned>(op);
  if (index < LOOM_NUM_OPS) return kNames[index];
  // Past Loom's own: a communicator's loomRedOpCreatePreMulSum op.
  return static_cast<int>(op) > 0 ? "premulsum" : "unknown";
}

}  // extern "C"

// Sizes and names of the C API's element types and operations.
#include <loom/loom.h>

extern "C" {

size_t loomTypeSize(loomDataType_t dtype) {
  switch (dtype) {
    case loomInt8:
    case loomUint8: return 1;
    case loomFloat16:
    case loomBfloat16: return 2;
    case loomInt32:
    case loomUint32:
    case loomFloat32: return 4;
    case loomInt64:
    case loomUint64:
    case loomFloat64: return 8;
  }
  return 0;
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

// The bytes of one element of each dtype, 0 for a value that is not one.
// Inline: every call's path asks several times (loomTypeSize, the public
// form, is an exported function, reached through the PLT).
#pragma once

#include <loom/loom.h>

#include <cstddef>

namespace loom {

constexpr size_t dtypeSize(loomDataType_t dtype) {
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

}  // namespace loom

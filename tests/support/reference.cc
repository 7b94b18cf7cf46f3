#include "support/reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace loom::test {
namespace {

bool isUnsigned(loomDataType_t dtype) {
  return dtype == loomUint8 || dtype == loomUint32 || dtype == loomUint64;
}
bool isInteger(loomDataType_t dtype) {
  return dtype <= loomUint64;
}

uint32_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 29;
  return static_cast<uint32_t>(x);
}

// bfloat16 from the definition: keep the top 16 bits of the float,
// rounding the dropped 16 to nearest, ties to even.
uint16_t bfloat16FromFloat(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint32_t upper = bits >> 16, lower = bits & 0xffff;
  if (lower > 0x8000 || (lower == 0x8000 && (upper & 1))) ++upper;
  return static_cast<uint16_t>(upper);
}

float bfloat16ToFloat(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

template <typename T>
void store(T value, void* out) {
  std::memcpy(out, &value, sizeof(T));
}

// An exact reduction of small integers, in int64.
int64_t reduceExact(loomRedOp_t op, const std::vector<int64_t>& values) {
  int64_t acc = values[0];
  for (size_t i = 1; i < values.size(); ++i) {
    switch (op) {
      case loomSum:
      case loomAvg: acc += values[i]; break;
      case loomProd: acc *= values[i]; break;
      case loomMax: acc = std::max(acc, values[i]); break;
      case loomMin: acc = std::min(acc, values[i]); break;
    }
  }
  return acc;
}

}  // namespace

double inputValue(loomDataType_t dtype, loomRedOp_t op, int rank, size_t index, bool dataMovement) {
  const bool uns = isUnsigned(dtype);
  if (dataMovement) {
    // Depends on the whole index: a block landing in the wrong place shows.
    int64_t v = static_cast<int64_t>((rank * 37 + index * 7 + index / 251) % 251);
    return static_cast<double>(uns ? v : v - 125);
  }
  uint32_t h = mix(static_cast<uint64_t>(rank) * 1000003 + index % kInputPeriod);
  switch (op) {
    case loomSum:
    case loomAvg: return uns ? static_cast<double>(h % 9) : static_cast<double>(h % 9) - 4;
    case loomProd: {
      static const int kSigned[3] = {1, 2, -1};
      static const int kUnsigned[3] = {1, 2, 1};
      return uns ? kUnsigned[h % 3] : kSigned[h % 3];
    }
    case loomMax:
    case loomMin: return uns ? static_cast<double>(h % 101) : static_cast<double>(h % 101) - 50;
  }
  return 0;
}

void encode(loomDataType_t dtype, double value, void* out) {
  switch (dtype) {
    case loomInt8:
    case loomUint8: store(static_cast<uint8_t>(static_cast<int64_t>(value)), out); break;
    case loomInt32:
    case loomUint32: store(static_cast<uint32_t>(static_cast<int64_t>(value)), out); break;
    case loomInt64:
    case loomUint64: store(static_cast<uint64_t>(static_cast<int64_t>(value)), out); break;
    case loomFloat16: store(static_cast<_Float16>(value), out); break;
    case loomBfloat16: store(bfloat16FromFloat(static_cast<float>(value)), out); break;
    case loomFloat32: store(static_cast<float>(value), out); break;
    case loomFloat64: store(value, out); break;
  }
}

Bytes makeInput(loomDataType_t dtype, loomRedOp_t op, int rank, size_t firstIndex, size_t count, bool dataMovement) {
  const size_t size = loomTypeSize(dtype);
  Bytes bytes(count * size);
  // Reduction inputs repeat every kInputPeriod elements: encode one period
  // and copy it (encoding every element of the large size class was a fifth
  // of the collective suites' time). Data-movement values depend on the
  // whole index and are encoded one by one.
  const size_t encoded = dataMovement ? count : std::min(count, kInputPeriod);
  for (size_t i = 0; i < encoded; ++i)
    encode(dtype, inputValue(dtype, op, rank, firstIndex + i, dataMovement), &bytes[i * size]);
  for (size_t done = encoded; done < count;) {
    const size_t run = std::min(done, count - done);  // doubling copies of what is there
    std::memcpy(&bytes[done * size], &bytes[0], run * size);
    done += run;
  }
  return bytes;
}

ReductionReference::ReductionReference(loomDataType_t dtype, loomRedOp_t op, int nranks)
    : dtype_(dtype), elementSize_(loomTypeSize(dtype)), period_(kInputPeriod * loomTypeSize(dtype)) {
  std::vector<int64_t> values(nranks);
  for (size_t i = 0; i < kInputPeriod; ++i) {
    for (int r = 0; r < nranks; ++r) values[r] = static_cast<int64_t>(inputValue(dtype, op, r, i));
    int64_t exact = reduceExact(op, values);
    double result = static_cast<double>(exact);
    if (op == loomAvg) {
      if (isInteger(dtype)) {
        // The sum wraps in the dtype's width first, as the library's does.
        int64_t wrapped = exact;
        if (dtype == loomInt8) wrapped = static_cast<int8_t>(exact);
        if (dtype == loomUint8) wrapped = static_cast<uint8_t>(exact);
        result = static_cast<double>(wrapped / nranks);
      } else if (dtype == loomFloat64) {
        result = static_cast<double>(exact) / nranks;
      } else {
        // float16/bfloat16/float32 divide in float, then round to the dtype.
        result = static_cast<double>(static_cast<float>(exact) / static_cast<float>(nranks));
        if (dtype == loomBfloat16) result = bfloat16ToFloat(bfloat16FromFloat(static_cast<float>(result)));
        if (dtype == loomFloat16) result = static_cast<double>(static_cast<_Float16>(static_cast<float>(result)));
      }
    }
    encode(dtype, result, &period_[i * elementSize_]);
  }
}

Bytes ReductionReference::expected(size_t firstIndex, size_t count) const {
  Bytes bytes(count * elementSize_);
  size_t done = 0;
  while (done < count) {
    size_t at = (firstIndex + done) % kInputPeriod;
    size_t run = std::min(kInputPeriod - at, count - done);
    std::memcpy(&bytes[done * elementSize_], &period_[at * elementSize_], run * elementSize_);
    done += run;
  }
  return bytes;
}

long firstMismatch(const Bytes& expected, const unsigned char* actual, size_t elementSize) {
  if (expected.empty() || std::memcmp(expected.data(), actual, expected.size()) == 0) return -1;
  for (size_t i = 0; i < expected.size(); i += elementSize)
    if (std::memcmp(&expected[i], actual + i, elementSize) != 0) return static_cast<long>(i / elementSize);
  return -1;
}

std::string describeElement(loomDataType_t dtype, const unsigned char* e) {
  std::ostringstream os;
  switch (dtype) {
    case loomInt8: os << static_cast<int>(static_cast<int8_t>(e[0])); break;
    case loomUint8: os << static_cast<int>(e[0]); break;
    case loomInt32: {
      int32_t v;
      std::memcpy(&v, e, 4);
      os << v;
      break;
    }
    case loomUint32: {
      uint32_t v;
      std::memcpy(&v, e, 4);
      os << v;
      break;
    }
    case loomInt64: {
      int64_t v;
      std::memcpy(&v, e, 8);
      os << v;
      break;
    }
    case loomUint64: {
      uint64_t v;
      std::memcpy(&v, e, 8);
      os << v;
      break;
    }
    case loomFloat16: {
      _Float16 v;
      std::memcpy(&v, e, 2);
      os << static_cast<float>(v);
      break;
    }
    case loomBfloat16: {
      uint16_t v;
      std::memcpy(&v, e, 2);
      os << bfloat16ToFloat(v);
      break;
    }
    case loomFloat32: {
      float v;
      std::memcpy(&v, e, 4);
      os << v;
      break;
    }
    case loomFloat64: {
      double v;
      std::memcpy(&v, e, 8);
      os << v;
      break;
    }
  }
  return os.str();
}

}  // namespace loom::test

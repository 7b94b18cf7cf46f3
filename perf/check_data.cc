#include "check_data.h"

#include <cmath>
#include <cstring>
#include <string>

#include "reduce/half.h"

namespace loom::perf {
namespace {

bool isUnsigned(loomDataType_t d) {
  return d == loomUint8 || d == loomUint32 || d == loomUint64;
}
bool isFloat(loomDataType_t d) {
  return d >= loomFloat16;
}

double value(loomDataType_t dtype, loomRedOp_t op, bool reduces, int rank, size_t i) {
  const bool uns = isUnsigned(dtype);
  if (!reduces) {
    // Depends on the whole index, so a block landing in the wrong place shows.
    double v = static_cast<double>((rank * 37 + i * 7 + i / 251) % 251);
    return uns ? v : v - 125;
  }
  switch (op) {
    case loomProd: return (rank + i) % 5 == 0 ? 2 : 1;
    case loomMax:
    case loomMin: {
      double v = static_cast<double>((rank * 7 + i * 13) % 101);
      return uns ? v : v - 50;
    }
    default: {
      double v = static_cast<double>((rank * 5 + i * 3) % 9);
      return uns ? v : v - 4;
    }
  }
}

void encode(loomDataType_t dtype, double v, void* out) {
  auto put = [out](auto x) { std::memcpy(out, &x, sizeof(x)); };
  switch (dtype) {
    // Through int64: integers wrap modulo their width, as Loom's sums do.
    case loomInt8: put(static_cast<int8_t>(static_cast<int64_t>(v))); break;
    case loomUint8: put(static_cast<uint8_t>(static_cast<int64_t>(v))); break;
    case loomInt32: put(static_cast<int32_t>(static_cast<int64_t>(v))); break;
    case loomUint32: put(static_cast<uint32_t>(static_cast<int64_t>(v))); break;
    case loomInt64: put(static_cast<int64_t>(v)); break;
    case loomUint64: put(static_cast<uint64_t>(static_cast<int64_t>(v))); break;
    case loomFloat16: put(floatToHalf(static_cast<float>(v))); break;
    case loomBfloat16: put(floatToBf16(static_cast<float>(v))); break;
    case loomFloat32: put(static_cast<float>(v)); break;
    case loomFloat64: put(v); break;
  }
}

double decode(loomDataType_t dtype, const void* in) {
  auto get = [in](auto x) {
    std::memcpy(&x, in, sizeof(x));
    return x;
  };
  switch (dtype) {
    case loomInt8: return get(int8_t{});
    case loomUint8: return get(uint8_t{});
    case loomInt32: return get(int32_t{});
    case loomUint32: return get(uint32_t{});
    case loomInt64: return static_cast<double>(get(int64_t{}));
    case loomUint64: return static_cast<double>(get(uint64_t{}));
    case loomFloat16: return halfToFloat(get(uint16_t{}));
    case loomBfloat16: return bf16ToFloat(get(uint16_t{}));
    case loomFloat32: return get(float{});
    case loomFloat64: return get(double{});
  }
  return 0;
}

int mantissaBits(loomDataType_t dtype) {
  switch (dtype) {
    case loomFloat16: return 10;
    case loomBfloat16: return 7;
    case loomFloat32: return 23;
    default: return 52;
  }
}

double reduceOverRanks(loomDataType_t dtype, loomRedOp_t op, int nranks, size_t i) {
  double acc = value(dtype, op, true, 0, i);
  for (int r = 1; r < nranks; ++r) {
    double v = value(dtype, op, true, r, i);
    switch (op) {
      case loomProd: acc *= v; break;
      case loomMax: acc = std::max(acc, v); break;
      case loomMin: acc = std::min(acc, v); break;
      default: acc += v;
    }
  }
  if (op == loomAvg) acc = isFloat(dtype) ? acc / nranks : std::trunc(acc / nranks);
  return acc;
}

bool matches(loomDataType_t dtype, loomRedOp_t op, double expected, double actual) {
  if (op != loomAvg || !isFloat(dtype) || expected == 0) return actual == expected;
  double ulp = std::ldexp(1.0, std::ilogb(expected) - mantissaBits(dtype));
  return std::fabs(actual - expected) <= 2 * ulp;
}

}  // namespace

void fillInput(void* buffer, size_t count, loomDataType_t dtype, loomRedOp_t op, bool reduces, int rank, size_t first) {
  const size_t size = loomTypeSize(dtype);
  auto* bytes = static_cast<unsigned char*>(buffer);
  for (size_t i = 0; i < count; ++i) encode(dtype, value(dtype, op, reduces, rank, first + i), bytes + i * size);
}

int64_t countWrong(const CollectiveSpec& spec, const void* recv, size_t count, loomDataType_t dtype, loomRedOp_t op,
                   int root, int rank, int nranks) {
  const size_t size = loomTypeSize(dtype);
  const auto* bytes = static_cast<const unsigned char*>(recv);
  const std::string name = spec.name;
  const size_t block = count / nranks;
  int64_t wrong = 0;
  auto check = [&](size_t at, double expected) {
    if (!isFloat(dtype)) {
      unsigned char wrapped[8];
      encode(dtype, expected, wrapped);
      expected = decode(dtype, wrapped);
    }
    if (!matches(dtype, op, expected, decode(dtype, bytes + at * size))) ++wrong;
  };
  if (name == "AllReduce" || (name == "Reduce" && rank == root)) {
    for (size_t i = 0; i < count; ++i) check(i, reduceOverRanks(dtype, op, nranks, i));
  } else if (name == "ReduceScatter") {
    for (size_t j = 0; j < block; ++j) check(j, reduceOverRanks(dtype, op, nranks, rank * block + j));
  } else if (name == "AllGather") {
    for (int q = 0; q < nranks; ++q)
      for (size_t j = 0; j < block; ++j) check(q * block + j, value(dtype, op, false, q, j));
  } else if (name == "AllToAll") {
    for (int q = 0; q < nranks; ++q)
      for (size_t j = 0; j < block; ++j) check(q * block + j, value(dtype, op, false, q, rank * block + j));
  } else if (name == "Broadcast") {
    for (size_t i = 0; i < count; ++i) check(i, value(dtype, op, false, root, i));
  } else if (name == "SendRecv") {
    for (size_t i = 0; i < count; ++i) check(i, value(dtype, op, false, (rank + nranks - 1) % nranks, i));
  }
  return wrong;
}

}  // namespace loom::perf

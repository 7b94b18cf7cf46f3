// Tests for src/reduce: the 16-bit float conversions and reduceArrays /
// divideArray. Expected values never come from the code under test: float16
// uses GCC's _Float16 (libgcc's software conversions), bfloat16 a rounding
// written from the definition, and the wider types exact arithmetic in a
// wider or unsigned type followed by a single rounding.
#include "reduce/reduce.h"

#include <gtest/gtest.h>
#include <loom/loom.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "reduce/half.h"

namespace loom {
namespace {

// ---- Reference conversions ---------------------------------------------------

double refHalfToDouble(uint16_t h) {
  return double(std::bit_cast<_Float16>(h));
}
uint16_t refDoubleToHalf(double v) {
  return std::bit_cast<uint16_t>(_Float16(v));
}

double refBf16ToDouble(uint16_t h) {
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  const int exp = (h >> 7) & 0xff;
  const int mant = h & 0x7f;
  if (exp == 0xff) return mant ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  if (exp == 0) return sign * std::ldexp(mant, -133);  // subnormal: mant * 2^-133
  return sign * std::ldexp(128 + mant, exp - 127 - 7);
}

// Rounds v to bfloat16 (8 significant bits, exponent range of float), ties to even.
uint16_t refDoubleToBf16(double v) {
  if (std::isnan(v)) return 0x7fc0;
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | 0x7f80;
  if (a == 0) return sign;
  int e;
  std::frexp(a, &e);                                                  // leading bit has weight 2^(e-1)
  const int q = std::max(e - 8, -133);                                // weight of the last kept bit
  const double r = std::ldexp(std::nearbyint(std::ldexp(a, -q)), q);  // RNE
  if (r >= 0x1p128) return sign | 0x7f80;
  if (r < 0x1p-126) return sign | uint16_t(std::ldexp(r, 133));  // subnormal
  int re;
  const double m = std::frexp(r, &re);  // r = m * 2^re, m in [0.5, 1)
  const int biased = re - 1 + 127;
  const int mant = int(std::ldexp(m, 8)) - 128;
  return uint16_t(sign | biased << 7 | mant);
}

bool halfIsNan(uint16_t h) {
  return (h & 0x7fff) > 0x7c00;
}
bool bf16IsNan(uint16_t h) {
  return (h & 0x7fff) > 0x7f80;
}

// ---- Conversions ----------------------------------------------------------------

TEST(HalfConversion, ToFloatMatchesFloat16ForAllValues) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = halfToFloat(uint16_t(h));
    const uint32_t bits = std::bit_cast<uint32_t>(f);
    if (halfIsNan(uint16_t(h))) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      EXPECT_EQ(bits >> 31, h >> 15) << std::hex << h;
      // Quiet, with the payload kept.
      EXPECT_EQ((bits >> 13) & 0x3ff, (h & 0x3ff) | 0x200) << std::hex << h;
    } else {
      const float ref = float(refHalfToDouble(uint16_t(h)));
      ASSERT_EQ(bits, std::bit_cast<uint32_t>(ref)) << std::hex << h;
    }
  }
}

TEST(HalfConversion, RoundTripsAllValues) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t back = floatToHalf(halfToFloat(uint16_t(h)));
    const uint16_t expected = halfIsNan(uint16_t(h)) ? uint16_t(h | 0x200) : uint16_t(h);
    ASSERT_EQ(back, expected) << std::hex << h;
  }
}

// floatToHalf(f) against _Float16; a NaN must give a quiet NaN of its sign.
::testing::AssertionResult halfRoundsLikeReference(float f) {
  const uint16_t got = floatToHalf(f);
  const uint16_t sign = uint16_t((std::bit_cast<uint32_t>(f) >> 16) & 0x8000);
  const bool ok = std::isnan(f) ? halfIsNan(got) && (got & 0x200) && (got & 0x8000) == sign : got == refDoubleToHalf(f);
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << std::hexfloat << f << " gave 0x" << std::hex << got << ", expected 0x"
                                       << refDoubleToHalf(f);
}

TEST(HalfConversion, RoundsMidpointsAndNeighboursToNearestEven) {
  // Every midpoint between adjacent finite halves (including the one between
  // 65504 and 65536, where rounding overflows), exactly, and one float ulp
  // either side, for both signs.
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double lo = refHalfToDouble(uint16_t(h));
    const double hi = h + 1 < 0x7c00 ? refHalfToDouble(uint16_t(h + 1)) : 65536.0;
    const float mid = float((lo + hi) / 2);  // exact: 12 significant bits
    ASSERT_EQ(double(mid), (lo + hi) / 2);
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      ASSERT_TRUE(halfRoundsLikeReference(f));
      ASSERT_TRUE(halfRoundsLikeReference(-f));
    }
  }
}

TEST(HalfConversion, MatchesFloat16OnDenseSampleOfFloats) {
  // ~17M floats spread over all bit patterns: every exponent, NaNs, infinities.
  for (uint64_t u = 0; u <= 0xffffffffu; u += 251)
    ASSERT_TRUE(halfRoundsLikeReference(std::bit_cast<float>(uint32_t(u))));
  for (float f : {INFINITY, 65504.0f, 65519.99f, 65520.0f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1p-26f, 0x1p-149f,
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::quiet_NaN()}) {
    ASSERT_TRUE(halfRoundsLikeReference(f));
    ASSERT_TRUE(halfRoundsLikeReference(-f));
  }
}

TEST(Bf16Conversion, ToFloatMatchesDefinitionForAllValues) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = bf16ToFloat(uint16_t(h));
    if (bf16IsNan(uint16_t(h))) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      EXPECT_EQ(std::bit_cast<uint32_t>(f), uint32_t(h | 0x40) << 16) << std::hex << h;
    } else {
      ASSERT_EQ(double(f), refBf16ToDouble(uint16_t(h))) << std::hex << h;
      ASSERT_EQ(std::signbit(f), bool(h & 0x8000)) << std::hex << h;
    }
  }
}

TEST(Bf16Conversion, RoundTripsAllValues) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t back = floatToBf16(bf16ToFloat(uint16_t(h)));
    const uint16_t expected = bf16IsNan(uint16_t(h)) ? uint16_t(h | 0x40) : uint16_t(h);
    ASSERT_EQ(back, expected) << std::hex << h;
  }
}

::testing::AssertionResult bf16RoundsLikeReference(float f) {
  const uint16_t got = floatToBf16(f);
  const uint16_t sign = uint16_t((std::bit_cast<uint32_t>(f) >> 16) & 0x8000);
  const bool ok = std::isnan(f) ? bf16IsNan(got) && (got & 0x40) && (got & 0x8000) == sign : got == refDoubleToBf16(f);
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << std::hexfloat << f << " gave 0x" << std::hex << got << ", expected 0x"
                                       << refDoubleToBf16(f);
}

TEST(Bf16Conversion, RoundsMidpointsAndNeighboursToNearestEven) {
  for (uint32_t h = 0; h < 0x7f80; ++h) {
    const double lo = refBf16ToDouble(uint16_t(h));
    const double hi = h + 1 < 0x7f80 ? refBf16ToDouble(uint16_t(h + 1)) : 0x1p128;
    const double midExact = (lo + hi) / 2;
    if (midExact > std::numeric_limits<float>::max()) continue;  // not a float
    const float mid = float(midExact);
    ASSERT_EQ(double(mid), midExact);
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      ASSERT_TRUE(bf16RoundsLikeReference(f));
      ASSERT_TRUE(bf16RoundsLikeReference(-f));
    }
  }
  ASSERT_TRUE(bf16RoundsLikeReference(std::numeric_limits<float>::max()));
  EXPECT_EQ(floatToBf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds up to infinity
}

TEST(Bf16Conversion, MatchesDefinitionOnDenseSampleOfFloats) {
  for (uint64_t u = 0; u <= 0xffffffffu; u += 1021)
    ASSERT_TRUE(bf16RoundsLikeReference(std::bit_cast<float>(uint32_t(u))));
}

// ---- Element access by dtype ---------------------------------------------------

size_t sizeOf(loomDataType_t t) {
  switch (t) {
    case loomInt8:
    case loomUint8: return 1;
    case loomFloat16:
    case loomBfloat16: return 2;
    case loomInt32:
    case loomUint32:
    case loomFloat32: return 4;
    default: return 8;
  }
}

bool isSigned(loomDataType_t t) {
  return t == loomInt8 || t == loomInt32 || t == loomInt64;
}
bool isInteger(loomDataType_t t) {
  return t <= loomUint64;
}

// Elements travel as their bit pattern, zero-extended to 64 bits.
uint64_t getBits(const unsigned char* p, size_t i, loomDataType_t t) {
  uint64_t v = 0;
  std::memcpy(&v, p + i * sizeOf(t), sizeOf(t));  // little-endian host
  return v;
}
void putBits(unsigned char* p, size_t i, loomDataType_t t, uint64_t v) {
  std::memcpy(p + i * sizeOf(t), &v, sizeOf(t));
}

uint64_t widthMask(loomDataType_t t) {
  return sizeOf(t) == 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * sizeOf(t))) - 1;
}

// Value of an integer element, sign-extended for signed types.
__int128 intValue(loomDataType_t t, uint64_t bits) {
  const int w = int(8 * sizeOf(t));
  if (isSigned(t) && w < 64 && (bits >> (w - 1)) & 1) return __int128(bits) - (__int128(1) << w);
  if (isSigned(t) && w == 64) return __int128(int64_t(bits));
  return __int128(bits);
}

double floatValue(loomDataType_t t, uint64_t bits) {
  switch (t) {
    case loomFloat16: return refHalfToDouble(uint16_t(bits));
    case loomBfloat16: return refBf16ToDouble(uint16_t(bits));
    case loomFloat32: return std::bit_cast<float>(uint32_t(bits));
    default: return std::bit_cast<double>(bits);
  }
}

// Rounds an exact (or, for float64, already rounded) value to dtype, once.
uint64_t floatBits(loomDataType_t t, double v) {
  switch (t) {
    case loomFloat16: return refDoubleToHalf(v);
    case loomBfloat16: return refDoubleToBf16(v);
    case loomFloat32: return std::bit_cast<uint32_t>(float(v));
    default: return std::bit_cast<uint64_t>(v);
  }
}

bool isNanBits(loomDataType_t t, uint64_t bits) {
  return !isInteger(t) && std::isnan(floatValue(t, bits));
}

// ---- Reference reduction -----------------------------------------------------

using U128 = unsigned __int128;

uint64_t refReduce(loomDataType_t t, loomRedOp_t op, uint64_t a, uint64_t b) {
  if (isInteger(t)) {
    const __int128 x = intValue(t, a), y = intValue(t, b);
    switch (op) {
      case loomSum:
      case loomAvg: return uint64_t(x + y) & widthMask(t);  // wraps modulo 2^width
      case loomProd: return uint64_t(U128(x) * U128(y)) & widthMask(t);
      case loomMax: return x > y ? a : b;
      case loomMin: return x < y ? a : b;
    }
  }
  const double x = floatValue(t, a), y = floatValue(t, b);
  switch (op) {
    case loomSum:
    case loomAvg:
      // Exact in double except for float64 (where this is the operation
      // itself) and extreme bfloat16 sums, where rounding first to 53 bits
      // cannot change the 8-bit result.
      return floatBits(t, x + y);
    case loomProd: return floatBits(t, x * y);  // exact in double below float64
    case loomMax:
    case loomMin: {
      // Documented rule: a NaN operand gives NaN; between equal values, b.
      if (std::isnan(x)) return a;
      if (std::isnan(y)) return b;
      const bool takeA = op == loomMax ? x > y : x < y;
      return takeA ? a : b;
    }
  }
  return 0;
}

uint64_t refDivide(loomDataType_t t, uint64_t bits, int d) {
  if (isInteger(t)) {
    const __int128 x = intValue(t, bits);
    const __int128 q = x < 0 ? -(-x / d) : x / d;  // toward zero, spelled out
    return uint64_t(q) & widthMask(t);
  }
  return floatBits(t, floatValue(t, bits) / d);  // one rounding (see refReduce)
}

// Equal bits, or both NaN (any payload). 16-bit results pass through
// floatToHalf/floatToBf16, so their NaNs must also be quiet.
bool sameResult(loomDataType_t t, uint64_t expected, uint64_t got) {
  if (t == loomFloat16 && halfIsNan(uint16_t(got)) && !(got & 0x200)) return false;
  if (t == loomBfloat16 && bf16IsNan(uint16_t(got)) && !(got & 0x40)) return false;
  return expected == got || (isNanBits(t, expected) && isNanBits(t, got));
}

// ---- Inputs ------------------------------------------------------------------

std::vector<uint64_t> edgeValues(loomDataType_t t) {
  switch (t) {
    case loomInt8: return {0, 1, 0xff, 0x7f, 0x80, 0x7e, 0x81, 2, 0x10};
    case loomUint8: return {0, 1, 0xff, 0x7f, 0x80, 0xfe, 2, 0x10};
    case loomInt32: return {0, 1, 0xffffffff, 0x7fffffff, 0x80000000, 0x80000001, 0x10000, 0xffff0000};
    case loomUint32: return {0, 1, 0xffffffff, 0x7fffffff, 0x80000000, 0x10000, 0xfffffffe};
    case loomInt64:
    case loomUint64: return {0, 1, ~0ull, 0x7fffffffffffffff, 0x8000000000000000, 0x8000000000000001, 1ull << 32};
    case loomFloat16:  // zeros, ±1, max, min normal, subnormals, inf, NaNs, ties
      return {0x0000, 0x8000, 0x3c00, 0xbc00, 0x7bff, 0xfbff, 0x0400, 0x8400, 0x0001, 0x8001,
              0x03ff, 0x7c00, 0xfc00, 0x7e00, 0x7d00, 0xfe00, 0x3c01, 0x1000, 0x5bff};
    case loomBfloat16:
      return {0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f7f, 0xff7f, 0x0080, 0x8080, 0x0001, 0x8001,
              0x007f, 0x7f80, 0xff80, 0x7fc0, 0x7fa0, 0xffc0, 0x3f81, 0x3b80, 0x7f00};
    case loomFloat32:
      return {0,          0x80000000, 0x3f800000, 0xbf800000, 0x7f7fffff, 0xff7fffff,
              0x00800000, 0x00000001, 0x80000001, 0x007fffff, 0x7f800000, 0xff800000,
              0x7fc00000, 0x7fa00000, 0x3f800001, 0x33800000, 0x4b800001};
    case loomFloat64:
      return {0,
              0x8000000000000000,
              0x3ff0000000000000,
              0xbff0000000000000,
              0x7fefffffffffffff,
              0xffefffffffffffff,
              0x0010000000000000,
              1,
              0x8000000000000001,
              0x7ff0000000000000,
              0xfff0000000000000,
              0x7ff8000000000000,
              0x7ff4000000000000,
              0x3ff0000000000001,
              0x3ca0000000000000};
  }
  return {};
}

// A value of ordinary magnitude (exponent within ±20 of 1), random sign and
// mantissa, so that sums and products round rather than overflow.
uint64_t moderateBits(loomDataType_t t, std::mt19937_64& rng) {
  const uint64_t r = rng();
  switch (t) {
    case loomFloat16: return (r & 0x83ff) | (uint64_t(15 - 7 + r % 15) << 10);
    case loomBfloat16: return (r & 0x807f) | (uint64_t(127 - 20 + r % 41) << 7);
    case loomFloat32: return (r & 0x807fffff) | (uint64_t(127 - 20 + r % 41) << 23);
    case loomFloat64: return (r & 0x800fffffffffffff) | (uint64_t(1023 - 20 + r % 41) << 52);
    default: return r % 64 - 32;  // small integers, both signs
  }
}

// All pairs of edge values first, then random bit patterns and moderate values.
void makeInputs(loomDataType_t t, size_t n, uint64_t seed, std::vector<uint64_t>& a, std::vector<uint64_t>& b) {
  std::mt19937_64 rng(seed);
  const auto edges = edgeValues(t);
  a.resize(n);
  b.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (i < edges.size() * edges.size() && n >= edges.size() * edges.size()) {
      a[i] = edges[i / edges.size()];
      b[i] = edges[i % edges.size()];
    } else if (i % 2) {
      a[i] = rng() & widthMask(t);
      b[i] = rng() & widthMask(t);
    } else {
      a[i] = moderateBits(t, rng) & widthMask(t);
      b[i] = moderateBits(t, rng) & widthMask(t);
    }
  }
}

// A buffer of n elements at an odd address, with guard bytes either side.
struct Buffer {
  static constexpr size_t kGuard = 16;
  Buffer(loomDataType_t type, size_t count, size_t offset)
      : t(type), n(count), raw(n * sizeOf(t) + 2 * kGuard + 8, 0xa5), data(raw.data() + kGuard + offset) {}
  void fill(const std::vector<uint64_t>& v) {
    for (size_t i = 0; i < n; ++i) putBits(data, i, t, v[i]);
  }
  uint64_t at(size_t i) const { return getBits(data, i, t); }
  bool guardsIntact() const {
    const size_t used = n * sizeOf(t);
    for (const unsigned char* p = raw.data(); p < data; ++p)
      if (*p != 0xa5) return false;
    for (const unsigned char* p = data + used; p < raw.data() + raw.size(); ++p)
      if (*p != 0xa5) return false;
    return true;
  }
  loomDataType_t t;
  size_t n;
  std::vector<unsigned char> raw;
  unsigned char* data;
};

// Runs the tests below once with AVX2/F16C (where the CPU has them) and once
// with the portable code, restoring the default afterwards.
struct CpuFeatures {
  explicit CpuFeatures(bool on) { reduceUseCpuFeatures(on); }
  ~CpuFeatures() { reduceUseCpuFeatures(true); }
};

// The large count: odd, far past every vector width and unrolled loop. Under
// a sanitizer (scripts/sanitize.sh), where each element costs several times
// as much, a tenth of it: still thousands of trips through the vector loop
// before the tail, which is what the sanitizer checks.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kLargeCount = 100003;
#else
constexpr size_t kLargeCount = 1000003;
#endif

const loomDataType_t kTypes[] = {loomInt8,   loomUint8,   loomInt32,    loomUint32,  loomInt64,
                                 loomUint64, loomFloat16, loomBfloat16, loomFloat32, loomFloat64};
const loomRedOp_t kOps[] = {loomSum, loomProd, loomMax, loomMin, loomAvg};
const char* const kTypeNames[] = {"int8",   "uint8",   "int32",    "uint32",  "int64",
                                  "uint64", "float16", "bfloat16", "float32", "float64"};
const char* const kOpNames[] = {"sum", "prod", "max", "min", "avg"};

// ---- reduceArrays against the reference ----------------------------------------

class ReduceTest : public ::testing::TestWithParam<std::tuple<loomDataType_t, loomRedOp_t>> {};

TEST_P(ReduceTest, MatchesReferenceForAllLayouts) {
  const auto [t, op] = GetParam();
  for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(1023), kLargeCount}) {
    std::vector<uint64_t> a, b;
    makeInputs(t, n, n * 131 + t * 7 + op, a, b);
    const bool small = n <= 1023;  // dst == a == b is rare: small counts only
    std::vector<uint64_t> ref(n), refSelf(small ? n : 0);
    for (size_t i = 0; i < n; ++i) {
      ref[i] = refReduce(t, op, a[i], b[i]);
      if (small) refSelf[i] = refReduce(t, op, a[i], a[i]);
    }
    for (bool features : {true, false}) {
      CpuFeatures cpu(features);
      // 0: dst, a, b distinct (each misaligned differently); 1: dst == a;
      // 2: dst == b; 3: dst == a == b.
      for (int layout = 0; layout < (small ? 4 : 3); ++layout) {
        SCOPED_TRACE("n=" + std::to_string(n) + " features=" + std::to_string(features) +
                     " layout=" + std::to_string(layout));
        Buffer ba(t, n, 1), bb(t, n, 3), bd(t, n, 5);
        ba.fill(a);
        bb.fill(b);
        const void* pa = ba.data;
        const void* pb = bb.data;
        Buffer* out = &bd;
        if (layout == 1) out = &ba;
        if (layout == 2) out = &bb;
        if (layout == 3) out = &ba, pb = ba.data;
        reduceArrays(out->data, pa, pb, n, t, op);
        const auto& expected = layout == 3 ? refSelf : ref;
        for (size_t i = 0; i < n; ++i)
          ASSERT_TRUE(sameResult(t, expected[i], out->at(i)))
              << "i=" << i << std::hex << " a=" << a[i] << " b=" << (layout == 3 ? a[i] : b[i])
              << " expected=" << expected[i] << " got=" << out->at(i);
        ASSERT_TRUE(ba.guardsIntact() && bb.guardsIntact() && bd.guardsIntact());
        if (layout != 1 && layout != 3) {
          for (size_t i = 0; i < n; ++i) ASSERT_EQ(ba.at(i), a[i]) << "input a modified";
        }
      }
    }
  }
}

// The AVX2/F16C and portable paths give bit-identical results, NaNs aside
// (which NaN's payload survives a NaN + NaN may differ).
TEST_P(ReduceTest, CpuPathsAgree) {
  const auto [t, op] = GetParam();
  const size_t n = 100003;
  std::vector<uint64_t> a, b;
  makeInputs(t, n, 99 + t + 10 * op, a, b);
  Buffer ba(t, n, 1), bb(t, n, 1), fast(t, n, 1), portable(t, n, 1);
  ba.fill(a);
  bb.fill(b);
  {
    CpuFeatures cpu(true);
    reduceArrays(fast.data, ba.data, bb.data, n, t, op);
  }
  {
    CpuFeatures cpu(false);
    reduceArrays(portable.data, ba.data, bb.data, n, t, op);
  }
  for (size_t i = 0; i < n; ++i) {
    if (isNanBits(t, fast.at(i)) && isNanBits(t, portable.at(i))) continue;
    ASSERT_EQ(fast.at(i), portable.at(i)) << "i=" << i;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypesAndOps, ReduceTest,
                         ::testing::Combine(::testing::ValuesIn(kTypes), ::testing::ValuesIn(kOps)), [](const auto& p) {
                           return std::string(kTypeNames[std::get<0>(p.param)]) + "_" + kOpNames[std::get<1>(p.param)];
                         });

TEST(ReduceArrays, CountZeroTouchesNothing) {
  for (loomDataType_t t : kTypes) {
    reduceArrays(nullptr, nullptr, nullptr, 0, t, loomSum);
    unsigned char d = 7, a = 1, b = 2;
    reduceArrays(&d, &a, &b, 0, t, loomProd);
    EXPECT_EQ(d, 7);
  }
}

// ---- Spot checks with literal expectations -------------------------------------

template <class T>
T reduceOne(T a, T b, loomDataType_t t, loomRedOp_t op) {
  T d{};
  reduceArrays(&d, &a, &b, 1, t, op);
  return d;
}

TEST(ReduceArrays, IntegersWrap) {
  EXPECT_EQ(reduceOne<int8_t>(127, 1, loomInt8, loomSum), -128);
  EXPECT_EQ(reduceOne<int8_t>(-128, -1, loomInt8, loomProd), -128);
  EXPECT_EQ(reduceOne<int8_t>(16, 16, loomInt8, loomProd), 0);
  EXPECT_EQ(reduceOne<uint8_t>(255, 1, loomUint8, loomSum), 0);
  EXPECT_EQ(reduceOne<uint8_t>(255, 255, loomUint8, loomProd), 1);
  EXPECT_EQ(reduceOne<int32_t>(INT32_MAX, 1, loomInt32, loomSum), INT32_MIN);
  EXPECT_EQ(reduceOne<int32_t>(INT32_MIN, -1, loomInt32, loomProd), INT32_MIN);
  EXPECT_EQ(reduceOne<int32_t>(65536, 65536, loomInt32, loomProd), 0);
  EXPECT_EQ(reduceOne<uint32_t>(UINT32_MAX, 1, loomUint32, loomSum), 0u);
  EXPECT_EQ(reduceOne<int64_t>(INT64_MAX, 1, loomInt64, loomSum), INT64_MIN);
  EXPECT_EQ(reduceOne<int64_t>(INT64_MIN, -1, loomInt64, loomProd), INT64_MIN);
  EXPECT_EQ(reduceOne<uint64_t>(UINT64_MAX, UINT64_MAX, loomUint64, loomProd), 1u);
  EXPECT_EQ(reduceOne<int8_t>(-128, 127, loomInt8, loomMax), 127);
  EXPECT_EQ(reduceOne<int64_t>(INT64_MIN, INT64_MAX, loomInt64, loomMin), INT64_MIN);
  EXPECT_EQ(reduceOne<uint64_t>(UINT64_MAX, 0, loomUint64, loomMax), UINT64_MAX);
  EXPECT_EQ(reduceOne<int32_t>(-7, 3, loomInt32, loomAvg), -4);  // avg reduces as sum
}

TEST(ReduceArrays, HalfRoundsOnceToNearestEven) {
  for (bool features : {true, false}) {
    CpuFeatures cpu(features);
    auto sum = [](uint16_t a, uint16_t b) { return reduceOne<uint16_t>(a, b, loomFloat16, loomSum); };
    auto prod = [](uint16_t a, uint16_t b) { return reduceOne<uint16_t>(a, b, loomFloat16, loomProd); };
    EXPECT_EQ(sum(0x7bff, 0x7bff), 0x7c00);   // 65504 + 65504 = inf
    EXPECT_EQ(sum(0x7bff, 0x4c00), 0x7c00);   // 65504 + 16 = 65520: tie, rounds to even (inf)
    EXPECT_EQ(sum(0x7bff, 0x4b80), 0x7bff);   // 65504 + 15 stays 65504
    EXPECT_EQ(sum(0x3c00, 0x1000), 0x3c00);   // 1 + 2^-11: tie, to even (1)
    EXPECT_EQ(sum(0x3c01, 0x1000), 0x3c02);   // (1 + 2^-10) + 2^-11: tie, to even (up)
    EXPECT_EQ(prod(0x0001, 0x3800), 0x0000);  // 2^-24 * 0.5: tie between 0 and 2^-24
    EXPECT_EQ(prod(0x0003, 0x3800), 0x0002);  // 1.5 * 2^-24: tie, to even
    EXPECT_EQ(sum(0x8000, 0x8000), 0x8000);   // -0 + -0 = -0
    EXPECT_EQ(sum(0x8000, 0x0000), 0x0000);
    EXPECT_TRUE(halfIsNan(sum(0x7c00, 0xfc00)));  // inf - inf
    EXPECT_TRUE(halfIsNan(reduceOne<uint16_t>(0x7e00, 0x3c00, loomFloat16, loomMax)));
    EXPECT_TRUE(halfIsNan(reduceOne<uint16_t>(0x3c00, 0x7e00, loomFloat16, loomMax)));
    EXPECT_TRUE(halfIsNan(reduceOne<uint16_t>(0x7e00, 0x3c00, loomFloat16, loomMin)));
    EXPECT_TRUE(halfIsNan(reduceOne<uint16_t>(0x3c00, 0x7e00, loomFloat16, loomMin)));
  }
}

TEST(ReduceArrays, Bf16RoundsOnceToNearestEven) {
  auto sum = [](uint16_t a, uint16_t b) { return reduceOne<uint16_t>(a, b, loomBfloat16, loomSum); };
  EXPECT_EQ(sum(0x3f80, 0x3b80), 0x3f80);  // 1 + 2^-8: tie, to even (1)
  EXPECT_EQ(sum(0x3f81, 0x3b80), 0x3f82);  // (1 + 2^-7) + 2^-8: tie, up to even
  EXPECT_EQ(sum(0x7f7f, 0x7f7f), 0x7f80);  // max + max = inf
  EXPECT_EQ(sum(0x0001, 0x0001), 0x0002);  // subnormals add exactly
  EXPECT_TRUE(bf16IsNan(sum(0x7f80, 0xff80)));
}

TEST(ReduceArrays, FloatMaxMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (loomRedOp_t op : {loomMax, loomMin}) {
    EXPECT_TRUE(std::isnan(reduceOne<float>(nan, 1.0f, loomFloat32, op)));
    EXPECT_TRUE(std::isnan(reduceOne<float>(1.0f, nan, loomFloat32, op)));
    EXPECT_TRUE(std::isnan(reduceOne<double>(double(nan), 1.0, loomFloat64, op)));
    EXPECT_TRUE(std::isnan(reduceOne<double>(1.0, double(nan), loomFloat64, op)));
  }
  EXPECT_EQ(reduceOne<float>(-1.0f, 2.0f, loomFloat32, loomMax), 2.0f);
  EXPECT_EQ(reduceOne<double>(-1.0, 2.0, loomFloat64, loomMin), -1.0);
}

// ---- divideArray ---------------------------------------------------------------

TEST(DivideArray, IntegersTruncateTowardZero) {
  int8_t i8[] = {-7, 7, -1, -128, 127};
  divideArray(i8, 5, loomInt8, 2);
  EXPECT_EQ(std::vector<int>(i8, i8 + 5), (std::vector<int>{-3, 3, 0, -64, 63}));
  int32_t i32[] = {-7, 7, INT32_MIN, INT32_MAX};
  divideArray(i32, 4, loomInt32, 2);
  EXPECT_EQ(std::vector<int32_t>(i32, i32 + 4), (std::vector<int32_t>{-3, 3, INT32_MIN / 2, INT32_MAX / 2}));
  int64_t i64[] = {-7, INT64_MIN};
  divideArray(i64, 2, loomInt64, 2);
  EXPECT_EQ(i64[0], -3);
  EXPECT_EQ(i64[1], INT64_MIN / 2);
  uint8_t u8[] = {255, 7};
  divideArray(u8, 2, loomUint8, 2);
  EXPECT_EQ(u8[0], 127);
  EXPECT_EQ(u8[1], 3);
  uint32_t u32[] = {UINT32_MAX};
  divideArray(u32, 1, loomUint32, 3);
  EXPECT_EQ(u32[0], UINT32_MAX / 3);
  uint64_t u64[] = {UINT64_MAX};
  divideArray(u64, 1, loomUint64, 1000);
  EXPECT_EQ(u64[0], UINT64_MAX / 1000);
}

TEST(DivideArray, FloatsRoundToNearestEven) {
  uint16_t h[] = {0x0001, 0x0003, 0x3c00, 0x7c00};  // 2^-24, 3 * 2^-24, 1, inf
  divideArray(h, 4, loomFloat16, 2);
  EXPECT_EQ(h[0], 0x0000);  // tie between 0 and 2^-24: to even
  EXPECT_EQ(h[1], 0x0002);
  EXPECT_EQ(h[2], 0x3800);
  EXPECT_EQ(h[3], 0x7c00);
  uint16_t one = 0x3c00;
  divideArray(&one, 1, loomFloat16, 3);
  EXPECT_EQ(one, refDoubleToHalf(1.0 / 3));
  float f = 1.0f;
  divideArray(&f, 1, loomFloat32, 3);
  EXPECT_EQ(f, 1.0f / 3.0f);
  double d = 1.0;
  divideArray(&d, 1, loomFloat64, 3);
  EXPECT_EQ(d, 1.0 / 3.0);
}

TEST(DivideArray, MatchesReferenceUnaligned) {
  for (loomDataType_t t : kTypes) {
    for (int divisor : {1, 2, 3, 7, 8, 1000}) {
      for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(1023), kLargeCount}) {
        SCOPED_TRACE(std::to_string(t) + " d=" + std::to_string(divisor) + " n=" + std::to_string(n));
        std::vector<uint64_t> a, unused;
        makeInputs(t, n, 5 + t + divisor, a, unused);
        Buffer buf(t, n, 1);
        buf.fill(a);
        divideArray(buf.data, n, t, divisor);
        for (size_t i = 0; i < n; ++i) {
          const uint64_t expected = refDivide(t, a[i], divisor);
          ASSERT_TRUE(sameResult(t, expected, buf.at(i)))
              << "i=" << i << std::hex << " x=" << a[i] << " expected=" << expected << " got=" << buf.at(i);
        }
        ASSERT_TRUE(buf.guardsIntact());
      }
    }
  }
}

// loomAvg as a collective does it: reduce as a sum, divide once at the end.
TEST(DivideArray, AverageOfThreeRanks) {
  for (loomDataType_t t : kTypes) {
    const size_t n = 1023;
    std::vector<uint64_t> r0, r1, r2, unused;
    makeInputs(t, n, 1 + t, r0, r1);
    makeInputs(t, n, 2 + t, r2, unused);
    Buffer acc(t, n, 1), b1(t, n, 1), b2(t, n, 1);
    acc.fill(r0);
    b1.fill(r1);
    b2.fill(r2);
    reduceArrays(acc.data, acc.data, b1.data, n, t, loomAvg);
    reduceArrays(acc.data, b2.data, acc.data, n, t, loomAvg);
    divideArray(acc.data, n, t, 3);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t s = refReduce(t, loomSum, r2[i], refReduce(t, loomSum, r0[i], r1[i]));
      ASSERT_TRUE(sameResult(t, refDivide(t, s, 3), acc.at(i))) << "type " << t << " i=" << i;
    }
  }
}

}  // namespace
}  // namespace loom

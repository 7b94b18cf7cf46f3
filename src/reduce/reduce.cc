#include "reduce/reduce.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "base/dtype_size.h"
#include "reduce/half.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define LOOM_REDUCE_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define LOOM_REDUCE_X86 0
#endif

namespace loom {
namespace {

// Buffers may be at any byte address, so elements are read and written with
// memcpy (GCC turns these into plain unaligned vector loads and stores).
template <class T>
inline T load(const unsigned char* p, size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

template <class T>
inline void store(unsigned char* p, size_t i, T v) {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

// Integer arithmetic is done in the unsigned type of the same width, where
// wraparound is defined.
template <class T>
auto wrapping() {
  if constexpr (std::is_integral_v<T>)
    return std::make_unsigned_t<T>{};
  else
    return T{};
}
template <class T>
using Wrap = decltype(wrapping<T>());

template <class T>
inline auto isNan(T x) {
  if constexpr (std::is_integral_v<T>)
    return false;
  else
    return x != x;
}

struct Sum {
  template <class T>
  T operator()(T a, T b) const {
    return T(Wrap<T>(a) + Wrap<T>(b));
  }
};
struct Prod {
  template <class T>
  T operator()(T a, T b) const {
    return T(Wrap<T>(a) * Wrap<T>(b));
  }
};
// A NaN in either operand wins, so the result does not depend on the order
// in which ranks' contributions are combined. Two plain selects (no `||`)
// keep the loop branch-free, which GCC needs to vectorise it.
struct Max {
  template <class T>
  T operator()(T a, T b) const {
    const T m = a > b ? a : b;
    return isNan(a) ? a : m;
  }
};
struct Min {
  template <class T>
  T operator()(T a, T b) const {
    const T m = a < b ? a : b;
    return isNan(a) ? a : m;
  }
};

// 16-bit floats are stored as uint16_t bit patterns and computed in float.
template <class Op, float (*toFloat)(uint16_t), uint16_t (*fromFloat)(float)>
struct Widened {
  uint16_t operator()(uint16_t a, uint16_t b) const { return fromFloat(Op{}(toFloat(a), toFloat(b))); }
};

// Whole blocks of a constant length let GCC vectorise even under -O2's
// "very cheap" cost model, which refuses loops that need a scalar epilogue.
constexpr size_t kBlock = 64;

// __restrict makes vectorisation unconditional (no runtime overlap checks),
// so each aliasing pattern allowed by the interface gets its own loop: a
// restrict pointer that is written must be the only route to its memory.
template <class T, class F>
void distinct(unsigned char* __restrict d, const unsigned char* __restrict a, const unsigned char* __restrict b,
              size_t n, F f) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (size_t j = i; j < i + kBlock; ++j) store<T>(d, j, f(load<T>(a, j), load<T>(b, j)));
  for (; i < n; ++i) store<T>(d, i, f(load<T>(a, i), load<T>(b, i)));
}

// d = f(d, s), or d = f(s, d) when swap.
template <class T, bool swap, class F>
void inPlace(unsigned char* __restrict d, const unsigned char* __restrict s, size_t n, F f) {
  auto g = [f](T x, T y) { return swap ? f(y, x) : f(x, y); };
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock)
    for (size_t j = i; j < i + kBlock; ++j) store<T>(d, j, g(load<T>(d, j), load<T>(s, j)));
  for (; i < n; ++i) store<T>(d, i, g(load<T>(d, i), load<T>(s, i)));
}

template <class T, class F>
void combine(void* dst, const void* a, const void* b, size_t n, F f) {
  auto* d = static_cast<unsigned char*>(dst);
  auto* pa = static_cast<const unsigned char*>(a);
  auto* pb = static_cast<const unsigned char*>(b);
  if (d == pa && d == pb) {  // rare: no restrict, no fast path
    for (size_t i = 0; i < n; ++i) store<T>(d, i, f(load<T>(d, i), load<T>(d, i)));
  } else if (d == pa) {
    inPlace<T, false>(d, pb, n, f);
  } else if (d == pb) {
    inPlace<T, true>(d, pa, n, f);
  } else {
    distinct<T>(d, pa, pb, n, f);
  }
}

template <class Op>
void reduceWith(void* dst, const void* a, const void* b, size_t n, loomDataType_t dtype) {
  switch (dtype) {
    case loomInt8: return combine<int8_t>(dst, a, b, n, Op{});
    case loomUint8: return combine<uint8_t>(dst, a, b, n, Op{});
    case loomInt32: return combine<int32_t>(dst, a, b, n, Op{});
    case loomUint32: return combine<uint32_t>(dst, a, b, n, Op{});
    case loomInt64: return combine<int64_t>(dst, a, b, n, Op{});
    case loomUint64: return combine<uint64_t>(dst, a, b, n, Op{});
    case loomFloat16: return combine<uint16_t>(dst, a, b, n, Widened<Op, halfToFloat, floatToHalf>{});
    case loomBfloat16: return combine<uint16_t>(dst, a, b, n, Widened<Op, bf16ToFloat, floatToBf16>{});
    case loomFloat32: return combine<float>(dst, a, b, n, Op{});
    case loomFloat64: return combine<double>(dst, a, b, n, Op{});
  }
}

// Calls fn(Op{}) with the functor for op.
template <class Fn>
inline void withOp(loomRedOp_t op, Fn fn) {
  switch (op) {
    case loomSum:
    case loomAvg: return fn(Sum{});
    case loomProd: return fn(Prod{});
    case loomMax: return fn(Max{});
    case loomMin: return fn(Min{});
  }
}

void reducePortable(void* dst, const void* a, const void* b, size_t n, loomDataType_t dtype, loomRedOp_t op) {
  withOp(op, [&](auto o) { reduceWith<decltype(o)>(dst, a, b, n, dtype); });
}

#if LOOM_REDUCE_X86
// Op on eight floats, with the same NaN rule as the functors.
template <class Op>
__attribute__((target("avx2"))) __m256 apply8(__m256 x, __m256 y) {
  if constexpr (std::is_same_v<Op, Sum>) {
    return _mm256_add_ps(x, y);
  } else if constexpr (std::is_same_v<Op, Prod>) {
    return _mm256_mul_ps(x, y);
  } else {
    // max_ps(x, y) is x > y ? x : y and min_ps(x, y) is x < y ? x : y.
    const __m256 m = std::is_same_v<Op, Max> ? _mm256_max_ps(x, y) : _mm256_min_ps(x, y);
    return _mm256_blendv_ps(m, x, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
  }
}

// Sixteen 16-bit floats in memory <-> two vectors of eight floats (in any
// order that store undoes), rounding and handling NaNs exactly as half.h.
struct HalfX16 {  // F16C: one instruction per eight elements each way
  __attribute__((target("avx2,f16c"))) static void load(const unsigned char* p, __m256& lo, __m256& hi) {
    lo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    hi = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16)));
  }
  __attribute__((target("avx2,f16c"))) static void store(unsigned char* p, __m256 lo, __m256 hi) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p + 16), _mm256_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT));
  }
};
// bfloat16 is the top half of a float. Unpack and pack work within 128-bit
// lanes and undo each other, so no cross-lane shuffles are needed. (GCC's
// vectorisation of half.h's version is about three times slower.)
struct Bf16X16 {
  __attribute__((target("avx2"))) static void load(const unsigned char* p, __m256& lo, __m256& hi) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    lo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(_mm256_setzero_si256(), v));
    hi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(_mm256_setzero_si256(), v));
  }
  // floatToBf16 on eight lanes, leaving each result in the low 16 bits.
  __attribute__((target("avx2"))) static __m256i narrow(__m256 f) {
    const __m256i x = _mm256_castps_si256(f);
    const __m256i high = _mm256_srli_epi32(x, 16);
    const __m256i odd = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i half = _mm256_add_epi32(_mm256_set1_epi32(0x7fff), odd);
    const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(x, half), 16);
    const __m256i quiet = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
    const __m256 nan = _mm256_cmp_ps(f, f, _CMP_UNORD_Q);
    return _mm256_blendv_epi8(rounded, quiet, _mm256_castps_si256(nan));
  }
  __attribute__((target("avx2"))) static void store(unsigned char* p, __m256 lo, __m256 hi) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm256_packus_epi32(narrow(lo), narrow(hi)));
  }
};

// Sixteen elements at a time; the tail uses the scalar functor. A block is
// loaded before it is stored, so dst == a or b is safe.
template <class Op, class X16, class Tail>
__attribute__((target("avx2,f16c"))) void wide16(void* dst, const void* a, const void* b, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  auto* pa = static_cast<const unsigned char*>(a);
  auto* pb = static_cast<const unsigned char*>(b);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 xlo, xhi, ylo, yhi;
    X16::load(pa + 2 * i, xlo, xhi);
    X16::load(pb + 2 * i, ylo, yhi);
    X16::store(d + 2 * i, apply8<Op>(xlo, ylo), apply8<Op>(xhi, yhi));
  }
  const Tail f;
  for (; i < n; ++i) store<uint16_t>(d, i, f(load<uint16_t>(pa, i), load<uint16_t>(pb, i)));
}

// reducePortable's loops compiled for AVX2 (flatten inlines them all into
// this function, so they take on its target), except for 16-bit floats.
__attribute__((target("avx2,f16c"), flatten)) void reduceAvx2(void* dst, const void* a, const void* b, size_t n,
                                                              loomDataType_t dtype, loomRedOp_t op) {
  withOp(op, [&](auto o) {
    using Op = decltype(o);
    if (dtype == loomFloat16)
      wide16<Op, HalfX16, Widened<Op, halfToFloat, floatToHalf>>(dst, a, b, n);
    else if (dtype == loomBfloat16)
      wide16<Op, Bf16X16, Widened<Op, bf16ToFloat, floatToBf16>>(dst, a, b, n);
    else
      reduceWith<Op>(dst, a, b, n, dtype);
  });
}

bool haveAvx2F16c() {
  static const bool ok = [] {
    __builtin_cpu_init();  // in case this runs before libgcc's constructor
    // cpuid for F16C: clang's __builtin_cpu_supports does not know "f16c".
    unsigned eax, ebx, ecx, edx;
    const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
    return __builtin_cpu_supports("avx2") && f16c;
  }();
  return ok;
}
#endif

std::atomic<bool> useCpuFeatures{true};

// Element-wise map over one buffer, in place.
template <class T, class F>
void mapInPlace(void* buf, size_t n, F f) {
  auto* p = static_cast<unsigned char*>(buf);
  for (size_t i = 0; i < n; ++i) store<T>(p, i, T(f(load<T>(p, i))));
}

}  // namespace

void reduceArrays(void* dst, const void* a, const void* b, size_t count, loomDataType_t dtype,
                  loomRedOp_t op) noexcept {
#if LOOM_REDUCE_X86
  // Less than one vector (a small message's few elements): the wide loop's
  // setup would cost more than the arithmetic.
  constexpr size_t kVectorBytes = 32;
  if (count * dtypeSize(dtype) >= kVectorBytes && useCpuFeatures.load(std::memory_order_relaxed) && haveAvx2F16c())
    return reduceAvx2(dst, a, b, count, dtype, op);
#endif
  reducePortable(dst, a, b, count, dtype, op);
}

void reduceUseCpuFeatures(bool enable) noexcept {
  useCpuFeatures.store(enable, std::memory_order_relaxed);
}

void divideArray(void* buf, size_t count, loomDataType_t dtype, int divisor) noexcept {
  // Narrow integers divide in 32 bits; unsigned types need an unsigned divisor
  // (divisor >= 1), lest the signed one convert in surprising ways.
  const auto us = unsigned(divisor);
  const auto fd = float(divisor);
  switch (dtype) {
    case loomInt8: return mapInPlace<int8_t>(buf, count, [=](int8_t x) { return x / divisor; });
    case loomUint8: return mapInPlace<uint8_t>(buf, count, [=](uint8_t x) { return x / us; });
    case loomInt32: return mapInPlace<int32_t>(buf, count, [=](int32_t x) { return x / divisor; });
    case loomUint32: return mapInPlace<uint32_t>(buf, count, [=](uint32_t x) { return x / us; });
    case loomInt64: return mapInPlace<int64_t>(buf, count, [=](int64_t x) { return x / divisor; });
    case loomUint64: return mapInPlace<uint64_t>(buf, count, [=](uint64_t x) { return x / us; });
    case loomFloat16:
      return mapInPlace<uint16_t>(buf, count, [=](uint16_t x) { return floatToHalf(halfToFloat(x) / fd); });
    case loomBfloat16:
      return mapInPlace<uint16_t>(buf, count, [=](uint16_t x) { return floatToBf16(bf16ToFloat(x) / fd); });
    case loomFloat32: return mapInPlace<float>(buf, count, [=](float x) { return x / fd; });
    case loomFloat64: return mapInPlace<double>(buf, count, [=](double x) { return x / divisor; });
  }
}

}  // namespace loom

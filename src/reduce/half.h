// IEEE binary16 and bfloat16 <-> float conversions by bit manipulation.
// Everything is inline and written as selects rather than branches so that
// loops calling these auto-vectorise. Float->16-bit rounds to nearest even
// (independent of the FPU rounding mode except where noted), overflows to
// infinity, and turns every NaN into a quiet NaN of the same sign that keeps
// the top payload bits; 16-bit->float is exact and also quiets NaNs.
#pragma once

#include <bit>
#include <cstdint>

namespace loom {

namespace half_detail {
// c ? a : b by masking. With a plain ?: GCC sinks the float arithmetic that
// feeds only one arm into a branch, and then will not vectorise the loop.
inline uint32_t select(bool c, uint32_t a, uint32_t b) {
  const uint32_t m = 0u - uint32_t(c);
  return (a & m) | (b & ~m);
}
}  // namespace half_detail

inline float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  // Compares are on signed values: SSE2 has no unsigned vector compare.
  const int32_t em = h & 0x7fff;  // exponent and mantissa
  // Normal: shift into place and rebias the exponent by 127 - 15.
  uint32_t bits = (uint32_t(em) << 13) + (112u << 23);
  // Subnormal or zero: the value is mantissa * 2^-24, exact in float.
  const uint32_t sub = std::bit_cast<uint32_t>(float(em) * 0x1p-24f);
  bits = half_detail::select(em < 0x0400, sub, bits);
  const uint32_t quiet = em > 0x7c00 ? 0x00400000u : 0u;
  const uint32_t special = 0x7f800000u | (uint32_t(em) << 13) | quiet;
  bits = half_detail::select(em >= 0x7c00, special, bits);
  return std::bit_cast<float>(bits | sign);
}

inline uint16_t floatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  const int32_t sax = int32_t(ax);  // for signed compares, as above
  // Normal result: add just under half an ulp plus the lowest kept bit (ties
  // to even) and let any carry ripple into the exponent; a carry out of
  // exponent 30 yields exactly infinity (0x7c00).
  const uint32_t odd = (ax >> 13) & 1u;
  const uint32_t normal = (ax - (112u << 23) + 0x0fffu + odd) >> 13;
  // Subnormal result (|f| < 2^-14): adding 0.5f aligns the value so the FPU
  // rounds it at bit 2^-24 (this one path relies on the default rounding
  // mode); the low mantissa bits are then the half's bits.
  const float aligned = std::bit_cast<float>(ax) + 0.5f;
  const uint32_t sub = std::bit_cast<uint32_t>(aligned) - 0x3f000000u;
  uint32_t h = half_detail::select(sax < (113 << 23), sub, normal);
  h = half_detail::select(sax >= (143 << 23), 0x7c00u, h);                         // |f| >= 65536: infinity
  h = half_detail::select(sax > 0x7f800000, (0x7e00u | (ax >> 13)) & 0x7fffu, h);  // NaN
  return uint16_t(h | sign);
}

inline float bf16ToFloat(uint16_t h) {
  const bool nan = (h & 0x7fffu) > 0x7f80u;
  const uint32_t bits = uint32_t(h | (nan ? 0x0040u : 0u)) << 16;
  return std::bit_cast<float>(bits);
}

inline uint16_t floatToBf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  // Same carry trick as floatToHalf; bfloat16 shares float's exponent range,
  // so subnormals and overflow to infinity fall out of it for free.
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t quiet = (x >> 16) | 0x0040u;
  return uint16_t(half_detail::select(int32_t(x & 0x7fffffffu) > 0x7f800000, quiet, rounded));
}

}  // namespace loom

// Element-wise reduction of host buffers: the arithmetic every host-side
// collective does once per chunk. Buffers may sit at any byte address.
#pragma once

#include <loom/loom.h>

#include <cstddef>

namespace loom {

// dst[i] = a[i] (op) b[i] for i < count. dst may be exactly a or b (in place),
// or both, but must not otherwise overlap them. loomAvg reduces as loomSum:
// the caller divides once at the end with divideArray. dtype and op must be
// valid.
//
// Integers wrap on overflow. float16/bfloat16 are widened to float, combined,
// and rounded back once (to nearest even). Max/min propagate NaN (any NaN
// operand gives a NaN); between equal values, such as -0 and +0, they return b.
void reduceArrays(void* dst, const void* a, const void* b, size_t count, loomDataType_t dtype, loomRedOp_t op) noexcept;

// buf[i] = buf[i] / divisor, divisor >= 1. Integers truncate toward zero
// (-7 / 2 == -3); float16/bfloat16 divide in float and round to nearest even,
// float32 divides in float, float64 in double.
void divideArray(void* buf, size_t count, loomDataType_t dtype, int divisor) noexcept;

// reduceArrays uses AVX2 and F16C where the CPU has them. Tests pass false to
// exercise the portable code too; results are the same either way, except
// perhaps for which NaN payload a NaN result carries.
void reduceUseCpuFeatures(bool enable) noexcept;

}  // namespace loom

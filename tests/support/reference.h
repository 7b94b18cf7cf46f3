// Test data whose reductions are exact in every dtype (small integers), and
// the expected results computed independently of Loom's kernels: in int64
// or double, then encoded into the dtype with the compiler's own
// conversions (_Float16) or a from-the-definition bfloat16 rounding.
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace loom::test {

using Bytes = std::vector<unsigned char>;

// The logical value rank `rank` holds at element `index` when testing `op`
// (for data movement pass loomSum and dataMovement = true).
double inputValue(loomDataType_t dtype, loomRedOp_t op, int rank, size_t index, bool dataMovement = false);

// Encodes a logical value into dtype's bytes (integers wrap as the unsigned
// type of the same width does).
void encode(loomDataType_t dtype, double value, void* out);

// count elements of inputValue(rank, firstIndex + i) encoded in dtype.
Bytes makeInput(loomDataType_t dtype, loomRedOp_t op, int rank, size_t firstIndex, size_t count,
                bool dataMovement = false);

// Expected reduction over ranks 0..nranks-1 of element `index`, encoded.
// Results repeat with the inputs' period, so expected buffers are built from
// one period computed once.
class ReductionReference {
 public:
  ReductionReference(loomDataType_t dtype, loomRedOp_t op, int nranks);
  // Expected bytes for elements [firstIndex, firstIndex + count).
  Bytes expected(size_t firstIndex, size_t count) const;

 private:
  loomDataType_t dtype_;
  size_t elementSize_;
  Bytes period_;
};

// The period of reduction inputs: a prime, so chunk boundaries (powers of
// two) never line up with it and a misplaced chunk shows.
constexpr size_t kInputPeriod = 1009;

// Index of the first element that differs (as bytes), or -1; for messages.
long firstMismatch(const Bytes& expected, const unsigned char* actual, size_t elementSize);
std::string describeElement(loomDataType_t dtype, const unsigned char* element);

}  // namespace loom::test

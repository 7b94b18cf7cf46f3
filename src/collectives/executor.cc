#include "collectives/executor.h"

#include <cstring>

#include "reduce/reduce.h"

namespace loom {
namespace {

class CpuExecutor final : public Executor {
 public:
  void copy(void* dst, const void* src, size_t bytes) const override { copyBytes(dst, src, bytes); }
  void reduce(void* dst, const void* a, const void* b, size_t count, loomDataType_t dtype,
              loomRedOp_t op) const override {
    reduceArrays(dst, a, b, count, dtype, op);
  }
  void divide(void* data, size_t count, loomDataType_t dtype, int divisor) const override {
    divideArray(data, count, dtype, divisor);
  }
};

}  // namespace

void copyBytes(void* dst, const void* src, size_t bytes) {
  if (dst != src && bytes > 0) std::memcpy(dst, src, bytes);
}

const Executor& executorFor(MemoryKind kind) {
  static const CpuExecutor cpu;
  switch (kind) {
    case MemoryKind::kHost: return cpu;
  }
  return cpu;
}

}  // namespace loom

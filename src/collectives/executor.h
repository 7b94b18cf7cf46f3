// Where a primitive's copies and reductions run, chosen by where the
// call's buffers live: the CPU for host memory. Device memory will add an
// executor that enqueues kernels on the caller's stream; the primitives,
// and the algorithms above them, stay as they are.
#pragma once

#include <loom/loom.h>

#include <cstddef>

namespace loom {

enum class MemoryKind { kHost };

class Executor {
 public:
  virtual ~Executor() = default;
  // dst = src; dst may be src (the in-place forms).
  virtual void copy(void* dst, const void* src, size_t bytes) const = 0;
  // dst[i] = a[i] op b[i] for count elements; dst may be a or b.
  virtual void reduce(void* dst, const void* a, const void* b, size_t count, loomDataType_t dtype,
                      loomRedOp_t op) const = 0;
  // data[i] /= divisor: the average's last step.
  virtual void divide(void* data, size_t count, loomDataType_t dtype, int divisor) const = 0;
};

// The executor for buffers of `kind`.
const Executor& executorFor(MemoryKind kind);

// memcpy that tolerates dst == src (the in-place forms): the host's copy,
// for the steps that only ever touch host memory (single-copy reads of
// peers' buffers, direct.h and registered.h).
void copyBytes(void* dst, const void* src, size_t bytes);

}  // namespace loom

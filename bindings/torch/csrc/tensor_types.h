// What a torch tensor and a c10d reduction are in Loom's terms: the dtype,
// the op, and a contiguous buffer to hand to Loom. Every refusal is a
// RuntimeError naming the operation and what it was given.
#pragma once

#include <loom/loom.h>
#include <torch/extension.h>

#include <string>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <vector>

namespace loom_torch {

// Loom's dtype for `tensor`, or a RuntimeError naming `operation` and the dtype.
loomDataType_t dtypeOf(const at::Tensor& tensor, const char* operation);

// Loom's op for `op` on tensors of `dtype` (bool reduces as logical or and
// and: SUM and MAX are "any", PRODUCT and MIN "all", as NCCL's backend does).
loomRedOp_t opOf(const c10d::ReduceOp& op, const at::Tensor& tensor, const char* operation);

// The Loom op a call reduces with: Loom's own, or for PREMUL_SUM a
// pre-multiplied sum made on `comm` for this call and destroyed after it
// (Loom scales the input when the call is made, so that is safe).
class CallOp {
 public:
  CallOp(loomComm_t comm, const c10d::ReduceOp& op, const at::Tensor& tensor, const char* operation);
  ~CallOp();
  CallOp(const CallOp&) = delete;
  CallOp& operator=(const CallOp&) = delete;
  loomRedOp_t get() const { return op_; }

 private:
  loomComm_t comm_;
  loomRedOp_t op_;
  bool made_ = false;
};

// Refuses anything but dense CPU tensors, naming the operation.
void checkCpu(const at::Tensor& tensor, const char* operation);
// The same for every tensor, which must also have one dtype and, with
// `sameSize`, one number of elements.
void checkAll(const std::vector<at::Tensor>& tensors, const char* operation, bool sameSize);

// A tensor as Loom reads or writes it: itself when contiguous, else a
// contiguous copy that finish() writes back.
struct Staged {
  at::Tensor original;
  at::Tensor buffer;
  bool copyBack = false;

  static Staged input(const at::Tensor& tensor);   // read only
  static Staged output(const at::Tensor& tensor);  // written: copied back
  void finish() {
    if (copyBack) original.copy_(buffer);
  }
};

}  // namespace loom_torch

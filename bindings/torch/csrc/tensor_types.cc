#include "tensor_types.h"

#include <torch/version.h>

namespace loom_torch {
namespace {

// PREMUL_SUM's factor: a number, or a one-element tensor (a list of them in
// PyTorch 1.x, one tensor in 2.x).
double factorOf(const c10d::NCCLPreMulSumSupplement& supplement) {
#if TORCH_VERSION_MAJOR >= 2
  return supplement.tensor_factor.defined() ? supplement.tensor_factor.item<double>() : supplement.double_factor;
#else
  return supplement.tensor_factors.empty() ? supplement.double_factor : supplement.tensor_factors[0].item<double>();
#endif
}

}  // namespace

loomDataType_t dtypeOf(const at::Tensor& tensor, const char* operation) {
  switch (tensor.scalar_type()) {
    case at::kFloat: return loomFloat32;
    case at::kDouble: return loomFloat64;
    case at::kHalf: return loomFloat16;
    case at::kBFloat16: return loomBfloat16;
    case at::kInt: return loomInt32;
    case at::kLong: return loomInt64;
    case at::kChar: return loomInt8;
    case at::kByte: return loomUint8;
    case at::kBool: return loomUint8;
    default:
      TORCH_CHECK(false, "loom backend: ", operation, " does not take tensors of dtype ", tensor.scalar_type(),
                  " (it takes float16, bfloat16, float32, float64, int8, uint8, int32, int64 and bool)");
  }
}

loomRedOp_t opOf(const c10d::ReduceOp& op, const at::Tensor& tensor, const char* operation) {
  const bool logical = tensor.scalar_type() == at::kBool;
  switch (op.op_) {
    case c10d::ReduceOp::SUM: return logical ? loomMax : loomSum;
    case c10d::ReduceOp::PRODUCT: return logical ? loomMin : loomProd;
    case c10d::ReduceOp::MIN: return loomMin;
    case c10d::ReduceOp::MAX: return loomMax;
    case c10d::ReduceOp::AVG:
      TORCH_CHECK(!logical, "loom backend: ", operation, " cannot average bool tensors");
      return loomAvg;
    default:
      TORCH_CHECK(false, "loom backend: ", operation, " does not take reduce op ", static_cast<int>(op.op_),
                  " (it takes SUM, PRODUCT, MIN, MAX, AVG and PREMUL_SUM)");
  }
}

CallOp::CallOp(loomComm_t comm, const c10d::ReduceOp& op, const at::Tensor& tensor, const char* operation)
    : comm_(comm) {
  if (op.op_ != c10d::ReduceOp::PREMUL_SUM) {
    op_ = opOf(op, tensor, operation);
    return;
  }
  TORCH_CHECK(at::isFloatingType(tensor.scalar_type()), "loom backend: ", operation,
              " takes PREMUL_SUM on floating-point tensors only, not ", tensor.scalar_type());
  const auto* supplement = dynamic_cast<const c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
  TORCH_CHECK(supplement != nullptr, "loom backend: ", operation, " got PREMUL_SUM without its factor");
  const double factor = factorOf(*supplement);
  const at::Tensor scalar = at::scalar_tensor(factor, tensor.options());
  TORCH_CHECK(loomRedOpCreatePreMulSum(&op_, scalar.data_ptr(), dtypeOf(tensor, operation), comm) == loomSuccess,
              "loom backend: ", operation, " could not make its PREMUL_SUM: ", loomCommGetLastError(comm));
  made_ = true;
}

CallOp::~CallOp() {
  if (made_) loomRedOpDestroy(op_, comm_);
}

void checkCpu(const at::Tensor& tensor, const char* operation) {
  TORCH_CHECK(tensor.device().is_cpu(), "loom backend: ", operation, " got a tensor on ", tensor.device(),
              ": Loom moves host memory only so far; pass CPU tensors");
  TORCH_CHECK(tensor.layout() == at::kStrided, "loom backend: ", operation, " takes dense tensors, not ",
              tensor.layout());
}

void checkAll(const std::vector<at::Tensor>& tensors, const char* operation, bool sameSize) {
  TORCH_CHECK(!tensors.empty(), "loom backend: ", operation, " got no tensors");
  for (const at::Tensor& tensor : tensors) {
    checkCpu(tensor, operation);
    TORCH_CHECK(tensor.scalar_type() == tensors[0].scalar_type(), "loom backend: ", operation,
                " got tensors of dtypes ", tensors[0].scalar_type(), " and ", tensor.scalar_type());
    TORCH_CHECK(!sameSize || tensor.numel() == tensors[0].numel(), "loom backend: ", operation, " got tensors of ",
                tensors[0].numel(), " and ", tensor.numel(), " elements");
  }
}

Staged Staged::input(const at::Tensor& tensor) {
  return {tensor, tensor.is_contiguous() ? tensor : tensor.contiguous(), false};
}

Staged Staged::output(const at::Tensor& tensor) {
  if (tensor.is_contiguous()) return {tensor, tensor, false};
  return {tensor, tensor.contiguous(), true};
}

}  // namespace loom_torch

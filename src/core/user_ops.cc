#include "core/user_ops.h"

#include <cstring>
#include <string>

#include "base/dtype_size.h"
#include "base/error.h"
#include "reduce/reduce.h"

namespace loom {

loomRedOp_t UserOps::createPreMulSum(loomDataType_t dtype, const void* scalar) {
  PreMulSum op{dtype, {}};
  std::memcpy(op.scalar, scalar, dtypeSize(dtype));
  std::lock_guard<std::mutex> lock(mutex_);
  ops_.push_back(op);
  return static_cast<loomRedOp_t>(LOOM_NUM_OPS + ops_.size() - 1);
}

void UserOps::destroy(const char* api, loomRedOp_t op) {
  std::lock_guard<std::mutex> lock(mutex_);
  const long index = static_cast<long>(op) - LOOM_NUM_OPS;
  if (index < 0 || index >= static_cast<long>(ops_.size()) || !ops_[index])
    fail(loomInvalidArgument, std::string(api) + ": op " + std::to_string(static_cast<int>(op)) +
                                  " is not a live op of this communicator from loomRedOpCreatePreMulSum");
  ops_[index].reset();
}

std::optional<PreMulSum> UserOps::resolve(const char* api, loomRedOp_t op, loomDataType_t dtype) const {
  if (static_cast<unsigned>(op) < LOOM_NUM_OPS) return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex_);
  const long index = static_cast<long>(op) - LOOM_NUM_OPS;
  if (index < 0 || index >= static_cast<long>(ops_.size()) || !ops_[index])
    fail(loomInvalidArgument, std::string(api) + ": op " + std::to_string(static_cast<int>(op)) +
                                  " is not a loomRedOp_t (0 to " + std::to_string(LOOM_NUM_OPS - 1) +
                                  ") nor a live op of this communicator from loomRedOpCreatePreMulSum");
  if (ops_[index]->dtype != dtype)
    fail(loomInvalidArgument, std::string(api) + ": op " + std::to_string(static_cast<int>(op)) + " was made for " +
                                  loomTypeName(ops_[index]->dtype) + ", and this call's dtype is " +
                                  loomTypeName(dtype));
  return ops_[index];
}

CollectiveArgs scaleInput(const PreMulSum& op, CollectiveArgs args, size_t inputCount,
                          std::shared_ptr<std::vector<unsigned char>>* scaled) {
  const size_t elem = dtypeSize(op.dtype);
  // The scalar as an array, so the product is the reduction kernel's own.
  std::vector<unsigned char> scalars(inputCount * elem);
  for (size_t i = 0; i < inputCount; ++i) std::memcpy(scalars.data() + i * elem, op.scalar, elem);
  *scaled = std::make_shared<std::vector<unsigned char>>(inputCount * elem);
  if (inputCount > 0) reduceArrays((*scaled)->data(), args.sendbuf, scalars.data(), inputCount, op.dtype, loomProd);
  args.sendbuf = (*scaled)->data();
  args.op = loomSum;
  return args;
}

}  // namespace loom

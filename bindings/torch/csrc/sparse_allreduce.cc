// ProcessGroupLoom::allreduce of a sparse (COO) tensor, which Loom has no
// collective for: built from AllGathers of the ranks' nonzeros.
#include <algorithm>

#include "process_group_loom.h"

namespace loom_torch {

// As gloo's: the ranks' indices and values, each padded to the most
// nonzeros any rank has, gathered with two AllGathers after one for the
// counts; each rank then adds them up itself. It runs to its end inside
// the call (three blocking AllGathers), and returns a completed work.
c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::sparseAllreduce(at::Tensor& tensor,
                                                                 const c10d::AllreduceOptions& opts) {
  const char* name = "all_reduce of a sparse tensor";
  TORCH_CHECK(tensor.device().is_cpu(), "loom backend: ", name, " got a tensor on ", tensor.device(),
              ": Loom moves host memory only so far; pass CPU tensors");
  TORCH_CHECK(opts.reduceOp == c10d::ReduceOp::SUM, "loom backend: ", name, " takes SUM only, as gloo's does");
  const at::Tensor mine = tensor.coalesce();
  const int64_t sparseDims = mine.sparse_dim();
  const at::Tensor values = mine.values().contiguous();
  const loomDataType_t dtype = dtypeOf(values, name);
  // The three AllGathers hold the communicator together: another thread's
  // call between them could meet a different call on another rank.
  std::unique_lock<std::mutex> lock(callMutex_);
  auto gather = [&](const at::Tensor& in, at::Tensor& out, loomDataType_t type) {
    const loomResult_t result =
        loomAllGather(in.data_ptr(), out.data_ptr(), static_cast<size_t>(in.numel()), type, comm_, nullptr, nullptr);
    if (result != loomSuccess) refuse(name, result);
  };
  const at::Tensor count = at::full({1}, mine._nnz(), at::kLong);
  at::Tensor counts = at::empty({size_}, at::kLong);
  gather(count, counts, loomInt64);
  const int64_t most = counts.max().item<int64_t>();

  std::vector<int64_t> valueShape = values.sizes().vec();
  valueShape[0] = most;
  at::Tensor paddedIndices = at::zeros({sparseDims, most}, at::kLong);
  paddedIndices.narrow(1, 0, mine._nnz()).copy_(mine.indices());
  at::Tensor paddedValues = at::zeros(valueShape, values.options());
  paddedValues.narrow(0, 0, mine._nnz()).copy_(values);
  at::Tensor everyIndex = at::empty({size_, sparseDims, most}, at::kLong);
  valueShape.insert(valueShape.begin(), size_);
  at::Tensor everyValue = at::empty(valueShape, values.options());
  gather(paddedIndices, everyIndex, loomInt64);
  gather(paddedValues, everyValue, dtype);
  lock.unlock();

  at::Tensor sum = at::zeros_like(mine);
  for (int r = 0; r < size_; ++r) {
    const int64_t nonzeros = counts[r].item<int64_t>();
    sum = sum.add(at::sparse_coo_tensor(everyIndex[r].narrow(1, 0, nonzeros), everyValue[r].narrow(0, 0, nonzeros),
                                        tensor.sizes()));
  }
  tensor.copy_(sum.coalesce());
  Buffers buffers;
  buffers.value = {tensor};
  return run(name, c10d::OpType::ALLREDUCE, std::move(buffers), false, [](std::vector<loomRequest_t>&) {});
}

}  // namespace loom_torch

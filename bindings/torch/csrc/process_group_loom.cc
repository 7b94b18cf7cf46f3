#include "process_group_loom.h"

#include <pybind11/pybind11.h>

#include <cstring>
#include <string>

namespace loom_torch {
namespace {

constexpr const char* kUniqueIdKey = "loom_unique_id";

size_t countOf(const at::Tensor& tensor) {
  return static_cast<size_t>(tensor.numel());
}

// One flat contiguous tensor holding `tensors` one after another, as a
// collective's input.
at::Tensor flatInput(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  for (const at::Tensor& tensor : tensors) flat.push_back(tensor.reshape({-1}));
  return at::cat(flat);
}

// A flat buffer for `tensors` written one after another, each of which the
// work then receives its slice of.
at::Tensor flatOutput(const std::vector<at::Tensor>& tensors, std::vector<Staged>& outputs) {
  int64_t total = 0;
  for (const at::Tensor& tensor : tensors) total += tensor.numel();
  at::Tensor flat = at::empty({total}, tensors[0].options());
  int64_t at = 0;
  for (const at::Tensor& tensor : tensors) {
    outputs.push_back({tensor, flat.narrow(0, at, tensor.numel()).view(tensor.sizes()), true});
    at += tensor.numel();
  }
  return flat;
}

}  // namespace

ProcessGroupLoom::ProcessGroupLoom(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                   std::chrono::milliseconds timeout)
    : ProcessGroupBase(rank, size), timeout_(timeout), completions_(std::make_unique<CompletionThread>()) {
  loomUniqueId id;
  if (rank == 0) {
    TORCH_CHECK(loomGetUniqueId(&id) == loomSuccess,
                "loom backend: rank 0 could not start the rendezvous: ", loomGetLastError());
    store->set(kUniqueIdKey, std::vector<uint8_t>(id.internal, id.internal + sizeof(id.internal)));
  } else {
    const std::vector<uint8_t> bytes = store->get(kUniqueIdKey);  // waits, up to the store's timeout
    TORCH_CHECK(bytes.size() == sizeof(id.internal), "loom backend: the store's '", kUniqueIdKey, "' holds ",
                bytes.size(), " bytes, not a Loom unique id of ", sizeof(id.internal),
                " (is every rank running the same loom_torch?)");
    std::memcpy(id.internal, bytes.data(), sizeof(id.internal));
  }
  loomConfig_t config = LOOM_CONFIG_INITIALIZER;
  config.timeoutMs = timeout.count() > 0 ? timeout.count() : -1;
  config.name = "torch";
  const loomResult_t result = loomCommInitRank(&comm_, size, id, rank, &config);
  TORCH_CHECK(result == loomSuccess, "loom backend: rank ", rank, " of ", size,
              " could not join its communicator: ", loomGetLastError());
}

ProcessGroupLoom::~ProcessGroupLoom() {
  // Python destroys a group holding the GIL, which the completion thread
  // may need to let go of a tensor (and Loom's progress, to finish a work
  // whose future has Python callbacks): both are waited for without it.
  auto shutdown = [this] {
    // Ends every pending operation (their works complete, failed if they
    // must), then the completion thread finishes what is queued and stops.
    if (comm_ != nullptr) loomCommDestroy(comm_);
    completions_.reset();
  };
  if (Py_IsInitialized() && PyGILState_Check()) {
    pybind11::gil_scoped_release withoutGil;
    shutdown();
  } else {
    shutdown();
  }
}

void ProcessGroupLoom::refuse(const char* operation, loomResult_t result) const {
  TORCH_CHECK(false, "loom backend: ", operation, " on rank ", rank_, " failed (", loomGetErrorString(result),
              "): ", loomCommGetLastError(comm_));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::run(const char* operation, c10d::OpType type, Buffers buffers,
                                                     bool grouped, const Launch& launch) {
  auto work = c10::make_intrusive<LoomWork>(rank_, type, operation, std::move(buffers.outputs),
                                            std::move(buffers.inputs), std::move(buffers.value), *completions_);
  std::vector<loomRequest_t> requests;
  {
    std::lock_guard<std::mutex> lock(callMutex_);
    if (grouped) loomGroupStart();
    try {
      launch(requests);
    } catch (...) {
      if (grouped) loomGroupEnd();
      for (loomRequest_t request : requests) loomRequestFree(request);
      throw;
    }
    // Every call of the group has a request: failures report through them.
    if (grouped) loomGroupEnd();
  }
  if (buffers.source) work->reportSource(buffers.source);
  work->start(std::move(requests));
  return work;
}

// Each Loom call below appends its request, or raises its sentence.
#define LOOM_CALL(operation, requests, call)                \
  do {                                                      \
    loomRequest_t request_ = nullptr;                       \
    const loomResult_t result_ = (call);                    \
    if (result_ != loomSuccess) refuse(operation, result_); \
    requests.push_back(request_);                           \
  } while (0)

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  const char* name = "all_reduce";
  if (tensors.size() == 1 && tensors[0].is_sparse()) return sparseAllreduce(tensors[0], opts);
  checkAll(tensors, name, true);
  TORCH_CHECK(tensors.size() == 1, "loom backend: ", name, " takes one tensor per rank, not ", tensors.size());
  Buffers buffers;
  buffers.outputs.push_back(Staged::output(tensors[0]));
  buffers.value = tensors;
  void* data = buffers.outputs[0].buffer.data_ptr();
  const size_t count = countOf(tensors[0]);
  const loomDataType_t dtype = dtypeOf(tensors[0], name);
  const CallOp callOp(comm_, opts.reduceOp, tensors[0], name);
  const loomRedOp_t op = callOp.get();
  return run(name, c10d::OpType::ALLREDUCE, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
    LOOM_CALL(name, requests, loomAllReduce(data, data, count, dtype, op, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                     const c10d::AllreduceCoalescedOptions& opts) {
  const char* name = "all_reduce_coalesced";
  checkAll(tensors, name, false);
  Buffers buffers;
  for (const at::Tensor& tensor : tensors) buffers.outputs.push_back(Staged::output(tensor));
  buffers.value = tensors;
  std::vector<void*> data;
  for (const Staged& staged : buffers.outputs) data.push_back(staged.buffer.data_ptr());
  const loomDataType_t dtype = dtypeOf(tensors[0], name);
  const CallOp callOp(comm_, opts.reduceOp, tensors[0], name);
  const loomRedOp_t op = callOp.get();
  return run(name, c10d::OpType::ALLREDUCE_COALESCED, std::move(buffers), true,
             [&](std::vector<loomRequest_t>& requests) {
               for (size_t i = 0; i < tensors.size(); ++i)
                 LOOM_CALL(name, requests,
                           loomAllReduce(data[i], data[i], countOf(tensors[i]), dtype, op, comm_, nullptr, &request_));
             });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts) {
  const char* name = "broadcast";
  checkAll(tensors, name, true);
  TORCH_CHECK(tensors.size() == 1, "loom backend: ", name, " takes one tensor per rank, not ", tensors.size());
  Buffers buffers;
  buffers.outputs.push_back(Staged::output(tensors[0]));
  buffers.value = tensors;
  void* data = buffers.outputs[0].buffer.data_ptr();
  const size_t count = countOf(tensors[0]);
  const loomDataType_t dtype = dtypeOf(tensors[0], name);
  const int root = static_cast<int>(opts.rootRank);
  return run(name, c10d::OpType::BROADCAST, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
    LOOM_CALL(name, requests, loomBroadcast(data, data, count, dtype, root, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts) {
  const char* name = "reduce";
  checkAll(tensors, name, true);
  TORCH_CHECK(tensors.size() == 1, "loom backend: ", name, " takes one tensor per rank, not ", tensors.size());
  Buffers buffers;
  buffers.outputs.push_back(Staged::output(tensors[0]));
  buffers.value = tensors;
  void* data = buffers.outputs[0].buffer.data_ptr();
  const size_t count = countOf(tensors[0]);
  const loomDataType_t dtype = dtypeOf(tensors[0], name);
  const CallOp callOp(comm_, opts.reduceOp, tensors[0], name);
  const loomRedOp_t op = callOp.get();
  const int root = static_cast<int>(opts.rootRank);
  return run(name, c10d::OpType::REDUCE, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
    LOOM_CALL(name, requests, loomReduce(data, data, count, dtype, op, root, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllgatherOptions& /*opts*/) {
  const char* name = "all_gather";
  checkAll(inputs, name, true);
  TORCH_CHECK(inputs.size() == 1 && outputs.size() == 1, "loom backend: ", name,
              " takes one input tensor and one output list per rank");
  TORCH_CHECK(static_cast<int>(outputs[0].size()) == size_, "loom backend: ", name, " needs ", size_,
              " output tensors (one per rank), got ", outputs[0].size());
  for (const at::Tensor& output : outputs[0]) {
    checkCpu(output, name);
    TORCH_CHECK(output.numel() == inputs[0].numel() && output.scalar_type() == inputs[0].scalar_type(),
                "loom backend: ", name, "'s output tensors must match its input in size and dtype");
  }
  Buffers buffers;
  const at::Tensor in = inputs[0].contiguous();
  const at::Tensor flat = flatOutput(outputs[0], buffers.outputs);
  buffers.inputs = {in, flat};
  buffers.value = outputs[0];
  const size_t count = countOf(in);
  const loomDataType_t dtype = dtypeOf(in, name);
  return run(name, c10d::OpType::ALLGATHER, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
    LOOM_CALL(name, requests, loomAllGather(in.data_ptr(), flat.data_ptr(), count, dtype, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                 const c10d::AllgatherOptions& /*opts*/) {
  const char* name = "all_gather_into_tensor";
  checkAll({input, output}, name, false);
  TORCH_CHECK(output.numel() == input.numel() * size_, "loom backend: ", name, " needs an output of ",
              input.numel() * size_, " elements (input times world size), got ", output.numel());
  Buffers buffers;
  const at::Tensor in = input.contiguous();
  buffers.outputs.push_back(Staged::output(output));
  buffers.inputs = {in};
  buffers.value = {output};
  void* out = buffers.outputs[0].buffer.data_ptr();
  const size_t count = countOf(in);
  const loomDataType_t dtype = dtypeOf(in, name);
  return run(name, c10d::OpType::_ALLGATHER_BASE, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
    LOOM_CALL(name, requests, loomAllGather(in.data_ptr(), out, count, dtype, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputLists,
                                                                     std::vector<at::Tensor>& inputs,
                                                                     const c10d::AllgatherOptions& /*opts*/) {
  const char* name = "all_gather_coalesced";
  checkAll(inputs, name, false);
  TORCH_CHECK(static_cast<int>(outputLists.size()) == size_, "loom backend: ", name, " needs ", size_,
              " output lists (one per rank), got ", outputLists.size());
  // One AllGather of every input laid end to end: rank r's block is its
  // inputs, which go to outputLists[r].
  Buffers buffers;
  const at::Tensor in = flatInput(inputs);
  std::vector<at::Tensor> everyOutput;
  for (auto& list : outputLists) {
    TORCH_CHECK(list.size() == inputs.size(), "loom backend: ", name, " needs ", inputs.size(),
                " tensors in every output list");
    for (size_t i = 0; i < list.size(); ++i) {
      checkCpu(list[i], name);
      TORCH_CHECK(list[i].numel() == inputs[i].numel() && list[i].scalar_type() == inputs[i].scalar_type(),
                  "loom backend: ", name, "'s output tensors must match the inputs in size and dtype");
      everyOutput.push_back(list[i]);
    }
  }
  const at::Tensor flat = flatOutput(everyOutput, buffers.outputs);
  buffers.inputs = {in, flat};
  buffers.value = everyOutput;
  const size_t count = countOf(in);
  const loomDataType_t dtype = dtypeOf(in, name);
  return run(name, c10d::OpType::ALLGATHER_COALESCED, std::move(buffers), false,
             [&](std::vector<loomRequest_t>& requests) {
               LOOM_CALL(name, requests,
                         loomAllGather(in.data_ptr(), flat.data_ptr(), count, dtype, comm_, nullptr, &request_));
             });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                                const c10d::ReduceScatterOptions& opts) {
  const char* name = "reduce_scatter";
  checkAll(outputs, name, true);
  TORCH_CHECK(outputs.size() == 1 && inputs.size() == 1, "loom backend: ", name,
              " takes one output tensor and one input list per rank");
  TORCH_CHECK(static_cast<int>(inputs[0].size()) == size_, "loom backend: ", name, " needs ", size_,
              " input tensors (one per rank), got ", inputs[0].size());
  for (const at::Tensor& input : inputs[0]) {
    checkCpu(input, name);
    TORCH_CHECK(input.numel() == outputs[0].numel() && input.scalar_type() == outputs[0].scalar_type(),
                "loom backend: ", name, "'s input tensors must match its output in size and dtype");
  }
  Buffers buffers;
  const at::Tensor in = flatInput(inputs[0]);
  buffers.outputs.push_back(Staged::output(outputs[0]));
  buffers.inputs = {in};
  buffers.value = outputs;
  void* out = buffers.outputs[0].buffer.data_ptr();
  const size_t count = countOf(outputs[0]);
  const loomDataType_t dtype = dtypeOf(outputs[0], name);
  const CallOp callOp(comm_, opts.reduceOp, outputs[0], name);
  const loomRedOp_t op = callOp.get();
  return run(name, c10d::OpType::REDUCE_SCATTER, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
    LOOM_CALL(name, requests, loomReduceScatter(in.data_ptr(), out, count, dtype, op, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                      const c10d::ReduceScatterOptions& opts) {
  const char* name = "reduce_scatter_tensor";
  checkAll({input, output}, name, false);
  TORCH_CHECK(input.numel() == output.numel() * size_, "loom backend: ", name, " needs an input of ",
              output.numel() * size_, " elements (output times world size), got ", input.numel());
  Buffers buffers;
  const at::Tensor in = input.contiguous();
  buffers.outputs.push_back(Staged::output(output));
  buffers.inputs = {in};
  buffers.value = {output};
  void* out = buffers.outputs[0].buffer.data_ptr();
  const size_t count = countOf(output);
  const loomDataType_t dtype = dtypeOf(output, name);
  const CallOp callOp(comm_, opts.reduceOp, output, name);
  const loomRedOp_t op = callOp.get();
  return run(
      name, c10d::OpType::_REDUCE_SCATTER_BASE, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
        LOOM_CALL(name, requests, loomReduceScatter(in.data_ptr(), out, count, dtype, op, comm_, nullptr, &request_));
      });
}

#if LOOM_TORCH_HAS_BACKEND
namespace {

// The pairs of a coalesced tensor collective: as many outputs as inputs,
// one dtype, each output `outputPerInput` times its input (a fraction when
// below 1).
void checkPairs(const std::vector<at::Tensor>& outputs, const std::vector<at::Tensor>& inputs, const char* operation,
                int64_t outputPerInput, int64_t inputPerOutput) {
  TORCH_CHECK(outputs.size() == inputs.size(), "loom backend: ", operation, " needs one output per input, got ",
              outputs.size(), " outputs for ", inputs.size(), " inputs");
  std::vector<at::Tensor> every = inputs;
  every.insert(every.end(), outputs.begin(), outputs.end());
  checkAll(every, operation, false);
  for (size_t i = 0; i < inputs.size(); ++i)
    TORCH_CHECK(outputs[i].numel() * inputPerOutput == inputs[i].numel() * outputPerInput, "loom backend: ", operation,
                "'s pair ", i, " has an input of ", inputs[i].numel(), " and an output of ", outputs[i].numel(),
                " elements, which the world size does not relate");
}

}  // namespace

ProcessGroupLoom::Buffers ProcessGroupLoom::stagePairs(const std::vector<at::Tensor>& outputs,
                                                       const std::vector<at::Tensor>& inputs,
                                                       std::vector<void*>& outs) {
  Buffers buffers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    buffers.inputs.push_back(inputs[i].contiguous());
    buffers.outputs.push_back(Staged::output(outputs[i]));
    outs.push_back(buffers.outputs.back().buffer.data_ptr());
  }
  buffers.value = outputs;
  return buffers;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::AllgatherOptions& /*opts*/) {
  const char* name = "all_gather_into_tensor_coalesced";
  checkPairs(outputs, inputs, name, size_, 1);
  std::vector<void*> outs;
  Buffers buffers = stagePairs(outputs, inputs, outs);
  const std::vector<at::Tensor> ins = buffers.inputs;
  const loomDataType_t dtype = dtypeOf(inputs[0], name);
  return run(name, c10d::OpType::COALESCED, std::move(buffers), true, [&](std::vector<loomRequest_t>& requests) {
    for (size_t i = 0; i < ins.size(); ++i)
      LOOM_CALL(name, requests,
                loomAllGather(ins[i].data_ptr(), outs[i], countOf(ins[i]), dtype, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::ReduceScatterOptions& opts) {
  const char* name = "reduce_scatter_tensor_coalesced";
  checkPairs(outputs, inputs, name, 1, size_);
  std::vector<void*> outs;
  Buffers buffers = stagePairs(outputs, inputs, outs);
  const std::vector<at::Tensor> ins = buffers.inputs;
  const loomDataType_t dtype = dtypeOf(outputs[0], name);
  const CallOp callOp(comm_, opts.reduceOp, outputs[0], name);
  const loomRedOp_t op = callOp.get();
  return run(name, c10d::OpType::COALESCED, std::move(buffers), true, [&](std::vector<loomRequest_t>& requests) {
    for (size_t i = 0; i < ins.size(); ++i)
      LOOM_CALL(
          name, requests,
          loomReduceScatter(ins[i].data_ptr(), outs[i], countOf(outputs[i]), dtype, op, comm_, nullptr, &request_));
  });
}
#endif

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                               std::vector<int64_t>& outputSplits,
                                                               std::vector<int64_t>& inputSplits,
                                                               const c10d::AllToAllOptions& /*opts*/) {
  const char* name = "all_to_all_single";
  checkAll({input, output}, name, false);
  Buffers buffers;
  const at::Tensor in = input.contiguous();
  buffers.outputs.push_back(Staged::output(output));
  buffers.inputs = {in};
  buffers.value = {output};
  char* out = static_cast<char*>(buffers.outputs[0].buffer.data_ptr());
  const char* from = static_cast<const char*>(in.data_ptr());
  const loomDataType_t dtype = dtypeOf(in, name);
  if (outputSplits.empty() && inputSplits.empty()) {
    TORCH_CHECK(in.numel() % size_ == 0 && in.numel() == output.numel(), "loom backend: ", name,
                " without splits needs input and output of one size, divisible by the world size ", size_);
    const size_t count = countOf(in) / size_;
    return run(name, c10d::OpType::ALLTOALL_BASE, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
      LOOM_CALL(name, requests, loomAllToAll(from, out, count, dtype, comm_, nullptr, &request_));
    });
  }
  // Uneven splits along the first dimension: a Send and a Recv per peer.
  const int64_t rowIn = input.dim() > 0 && input.size(0) > 0 ? input.numel() / input.size(0) : 0;
  const int64_t rowOut = output.dim() > 0 && output.size(0) > 0 ? output.numel() / output.size(0) : 0;
  auto splitsOf = [&](std::vector<int64_t> splits, const at::Tensor& tensor, const char* which) {
    if (splits.empty()) splits.assign(size_, tensor.dim() > 0 ? tensor.size(0) / size_ : 0);
    TORCH_CHECK(static_cast<int>(splits.size()) == size_, "loom backend: ", name, " needs ", size_, " ", which,
                " splits, got ", splits.size());
    int64_t rows = 0;
    for (int64_t split : splits) {
      TORCH_CHECK(split >= 0, "loom backend: ", name, " got a negative ", which, " split");
      rows += split;
    }
    TORCH_CHECK(tensor.dim() > 0 && rows == tensor.size(0), "loom backend: ", name, "'s ", which, " splits add up to ",
                rows, " rows, but the tensor has ", tensor.dim() > 0 ? tensor.size(0) : 0);
    return splits;
  };
  const std::vector<int64_t> sendRows = splitsOf(inputSplits, in, "input");
  const std::vector<int64_t> recvRows = splitsOf(outputSplits, output, "output");
  std::vector<size_t> sendCounts(size_), sendDispls(size_), recvCounts(size_), recvDispls(size_);
  size_t sendAt = 0, recvAt = 0;
  for (int peer = 0; peer < size_; ++peer) {
    sendCounts[peer] = sendRows[peer] * rowIn;
    recvCounts[peer] = recvRows[peer] * rowOut;
    sendDispls[peer] = sendAt;
    recvDispls[peer] = recvAt;
    sendAt += sendCounts[peer];
    recvAt += recvCounts[peer];
  }
  return run(name, c10d::OpType::ALLTOALL_BASE, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
    LOOM_CALL(name, requests,
              loomAllToAllv(from, sendCounts.data(), sendDispls.data(), out, recvCounts.data(), recvDispls.data(),
                            dtype, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::alltoall(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllToAllOptions& /*opts*/) {
  const char* name = "all_to_all";
  checkAll(inputs, name, false);
  checkAll(outputs, name, false);
  TORCH_CHECK(static_cast<int>(inputs.size()) == size_ && static_cast<int>(outputs.size()) == size_,
              "loom backend: ", name, " needs ", size_, " input and output tensors (one per rank)");
  Buffers buffers;
  std::vector<at::Tensor> in;
  for (const at::Tensor& input : inputs) in.push_back(input.contiguous());
  for (const at::Tensor& output : outputs) buffers.outputs.push_back(Staged::output(output));
  buffers.inputs = in;
  buffers.value = outputs;
  std::vector<void*> out;
  for (const Staged& staged : buffers.outputs) out.push_back(staged.buffer.data_ptr());
  const loomDataType_t dtype = dtypeOf(inputs[0], name);
  return run(name, c10d::OpType::ALLTOALL, std::move(buffers), true, [&](std::vector<loomRequest_t>& requests) {
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) {
        TORCH_CHECK(in[peer].numel() == outputs[peer].numel(), "loom backend: ", name, " on rank ", rank_,
                    " sends itself ", in[peer].numel(), " elements into ", outputs[peer].numel());
        std::memcpy(out[peer], in[peer].data_ptr(), in[peer].nbytes());
      } else {
        LOOM_CALL(name, requests, loomRecv(out[peer], countOf(outputs[peer]), dtype, peer, comm_, nullptr, &request_));
        LOOM_CALL(name, requests,
                  loomSend(in[peer].data_ptr(), countOf(in[peer]), dtype, peer, comm_, nullptr, &request_));
      }
    }
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::GatherOptions& opts) {
  const char* name = "gather";
  checkAll(inputs, name, true);
  TORCH_CHECK(inputs.size() == 1, "loom backend: ", name, " takes one input tensor per rank");
  const int root = static_cast<int>(opts.rootRank);
  Buffers buffers;
  const at::Tensor in = inputs[0].contiguous();
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_, "loom backend: ", name, " needs ",
                size_, " output tensors on the root");
    for (const at::Tensor& output : outputs[0]) {
      checkCpu(output, name);
      TORCH_CHECK(output.numel() == in.numel() && output.scalar_type() == in.scalar_type(), "loom backend: ", name,
                  "'s output tensors must match its input in size and dtype");
    }
    flat = flatOutput(outputs[0], buffers.outputs);
    buffers.value = outputs[0];
  }
  buffers.inputs = {in};
  if (flat.defined()) buffers.inputs.push_back(flat);
  void* out = flat.defined() ? flat.data_ptr() : nullptr;
  const loomDataType_t dtype = dtypeOf(in, name);
  const size_t count = countOf(in);
  return run(name, c10d::OpType::GATHER, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
    LOOM_CALL(name, requests, loomGather(in.data_ptr(), out, count, dtype, root, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::scatter(std::vector<at::Tensor>& outputs,
                                                         std::vector<std::vector<at::Tensor>>& inputs,
                                                         const c10d::ScatterOptions& opts) {
  const char* name = "scatter";
  checkAll(outputs, name, true);
  TORCH_CHECK(outputs.size() == 1, "loom backend: ", name, " takes one output tensor per rank");
  const int root = static_cast<int>(opts.rootRank);
  Buffers buffers;
  buffers.outputs.push_back(Staged::output(outputs[0]));
  buffers.value = outputs;
  at::Tensor flat;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_, "loom backend: ", name, " needs ",
                size_, " input tensors on the root");
    for (const at::Tensor& input : inputs[0]) {
      checkCpu(input, name);
      TORCH_CHECK(input.numel() == outputs[0].numel() && input.scalar_type() == outputs[0].scalar_type(),
                  "loom backend: ", name, "'s input tensors must match its output in size and dtype");
    }
    flat = flatInput(inputs[0]);
    buffers.inputs = {flat};
  }
  void* out = buffers.outputs[0].buffer.data_ptr();
  const void* in = flat.defined() ? flat.data_ptr() : nullptr;
  const loomDataType_t dtype = dtypeOf(outputs[0], name);
  const size_t count = countOf(outputs[0]);
  return run(name, c10d::OpType::SCATTER, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
    LOOM_CALL(name, requests, loomScatter(in, out, count, dtype, root, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::send(std::vector<at::Tensor>& tensors, int dstRank, int tag) {
  checkUserTag("send", tag);
  return transmit(tensors, dstRank, tag);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) {
  checkUserTag("recv", tag);
  return receive(tensors, srcRank, tag);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::recvAnysource(std::vector<at::Tensor>& tensors, int tag) {
  checkUserTag("recv", tag);
  return receive(tensors, kAnySource, tag);
}

void ProcessGroupLoom::checkUserTag(const char* operation, int tag) {
  TORCH_CHECK(tag >= 0, "loom backend: ", operation, " with tag ", tag, ": tags are 0 or more");
  TORCH_CHECK(tag < kMonitoredBarrierTags, "loom backend: ", operation, " with tag ", tag, ": tags from ",
              kMonitoredBarrierTags, " up carry monitored_barrier's messages; use one below");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::transmit(std::vector<at::Tensor>& tensors, int dstRank, int tag) {
  const char* name = "send";
  checkAll(tensors, name, true);
  TORCH_CHECK(tensors.size() == 1, "loom backend: ", name, " takes one tensor");
  Buffers buffers;
  const at::Tensor in = tensors[0].contiguous();
  buffers.inputs = {in};
  buffers.value = tensors;
  const loomDataType_t dtype = dtypeOf(in, name);
  return run(name, c10d::OpType::SEND, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
    LOOM_CALL(name, requests,
              loomSendTagged(in.data_ptr(), countOf(in), dtype, dstRank, tag, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::receive(std::vector<at::Tensor>& tensors, int srcRank, int tag) {
  const char* name = "recv";
  checkAll(tensors, name, true);
  TORCH_CHECK(tensors.size() == 1, "loom backend: ", name, " takes one tensor");
  const bool anySource = srcRank == kAnySource;
  Buffers buffers;
  buffers.outputs.push_back(Staged::output(tensors[0]));
  buffers.value = tensors;
  if (anySource) buffers.source = std::make_shared<int>(-1);
  void* out = buffers.outputs[0].buffer.data_ptr();
  int* source = buffers.source.get();
  const loomDataType_t dtype = dtypeOf(tensors[0], name);
  const size_t count = countOf(tensors[0]);
  const c10d::OpType type = anySource ? c10d::OpType::RECVANYSOURCE : c10d::OpType::RECV;
  return run(name, type, std::move(buffers), false, [&](std::vector<loomRequest_t>& requests) {
    LOOM_CALL(name, requests,
              anySource ? loomRecvAnySource(out, count, dtype, tag, source, comm_, nullptr, &request_)
                        : loomRecvTagged(out, count, dtype, srcRank, tag, comm_, nullptr, &request_));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupLoom::barrier(const c10d::BarrierOptions& /*opts*/) {
  const char* name = "barrier";
  return run(name, c10d::OpType::BARRIER, Buffers{}, false,
             [&](std::vector<loomRequest_t>& requests) { LOOM_CALL(name, requests, loomBarrier(comm_, &request_)); });
}

}  // namespace loom_torch

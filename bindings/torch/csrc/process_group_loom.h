// torch.distributed's process group on a Loom communicator. Ranks meet
// through the store PyTorch hands the backend (rank 0 puts a Loom unique
// id there, the others read it), so Loom never binds MASTER_PORT, which the
// store owns; each group (dist.new_group) gets a store of its own prefix,
// hence a communicator of its own.
//
// Every operation is launched on Loom at once and returns a LoomWork
// (loom_work.h). Calls are serialized on the communicator, which takes one
// call at a time: DDP's autograd threads may call concurrently.
//
// The class torch.distributed asks a backend for changed in PyTorch 2.0:
// 1.x takes a c10d::ProcessGroup, 2.x a c10d::Backend (which its own
// ProcessGroup wraps). The methods are the same; ProcessGroupBase is the one
// of the torch this is built against.
#pragma once

#include <loom/loom.h>
#include <torch/version.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "loom_work.h"

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#define LOOM_TORCH_HAS_BACKEND 1
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#define LOOM_TORCH_HAS_BACKEND 0
#endif

namespace loom_torch {

#if LOOM_TORCH_HAS_BACKEND
using ProcessGroupBase = c10d::Backend;
#else
using ProcessGroupBase = c10d::ProcessGroup;
#endif

class ProcessGroupLoom : public ProcessGroupBase {
 public:
  ProcessGroupLoom(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, std::chrono::milliseconds timeout);
  ~ProcessGroupLoom() override;

  const std::string getBackendName() const override { return "loom"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts = c10d::BroadcastOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts = c10d::AllreduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts = c10d::AllreduceCoalescedOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts = c10d::ReduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(
      at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
#if LOOM_TORCH_HAS_BACKEND
  // all_gather_into_tensor and reduce_scatter_tensor under
  // torch.distributed's coalescing manager (2.x): one work for them all.
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
#endif
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts = c10d::GatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts = c10d::ScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits, std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts = c10d::BarrierOptions()) override;
  void monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks = false) override;

 private:
  // What an operation reads and writes, for its work.
  struct Buffers {
    std::vector<Staged> outputs;
    std::vector<at::Tensor> inputs;
    std::vector<at::Tensor> value;
    std::shared_ptr<int> source;  // a recv from any source: where Loom writes the sender's rank
  };
  // Runs `launch` (which calls Loom, each call appending its request) on
  // the communicator, inside a Loom group when `grouped`, and returns the
  // started work; a refused launch raises its sentence.
  using Launch = std::function<void(std::vector<loomRequest_t>&)>;
  c10::intrusive_ptr<c10d::Work> run(const char* operation, c10d::OpType type, Buffers buffers, bool grouped,
                                     const Launch& launch);
#if LOOM_TORCH_HAS_BACKEND
  // A coalesced tensor collective's buffers: each input contiguous, each
  // output staged, and in `outs` where Loom writes each output.
  static Buffers stagePairs(const std::vector<at::Tensor>& outputs, const std::vector<at::Tensor>& inputs,
                            std::vector<void*>& outs);
#endif
  // allreduce of a sparse (COO) tensor.
  c10::intrusive_ptr<c10d::Work> sparseAllreduce(at::Tensor& tensor, const c10d::AllreduceOptions& opts);
  // send, recv and recvAnysource (srcRank kAnySource) once the tag is
  // checked: any tag, monitored_barrier's too.
  static constexpr int kAnySource = -1;
  c10::intrusive_ptr<c10d::Work> transmit(std::vector<at::Tensor>& tensors, int dstRank, int tag);
  c10::intrusive_ptr<c10d::Work> receive(std::vector<at::Tensor>& tensors, int srcRank, int tag);
  static void checkUserTag(const char* operation, int tag);
  // The sentence of a refused Loom call, raised as a RuntimeError.
  [[noreturn]] void refuse(const char* operation, loomResult_t result) const;

  // monitored_barrier's tokens travel on the tags from this one up (a tag
  // per call), which send and recv refuse.
  static constexpr int kMonitoredBarrierTags = 1 << 30;
  std::atomic<uint64_t> monitoredBarriers_{0};  // calls so far
  // monitored_barrier's parts: rank 0's (which takes the tokens in
  // awaitTheOthers, then replies), every other rank's.
  void monitorTheOthers(std::chrono::milliseconds timeout, bool waitAllRanks, int tag);
  void awaitTheOthers(std::chrono::milliseconds timeout, bool waitAllRanks, int tag);
  void reportToRankZero(int tag);

  std::chrono::milliseconds timeout_;  // the group's
  loomComm_t comm_ = nullptr;
  std::mutex callMutex_;  // the communicator takes one call at a time
  std::unique_ptr<CompletionThread> completions_;
};

}  // namespace loom_torch

// One c10d operation on Loom: the Loom requests it launched (one
// collective, or the Sends and Recvs of a group), the tensors they read and
// write, and the future DDP's communication hooks chain on.
//
// Loom calls back from its progress (loomRequestSetCallback) when the last
// request ends; the callback only queues the work for its process group's
// completion thread, since a future's then() callbacks may call the process
// group again, which Loom's own threads must not. A thread that waits
// finishes the work itself, with no hand-over: wait() drives Loom on the
// waiting thread (loomWait), then writes back outputs and completes the
// future; when the work ends while it waits, the completion thread is not
// woken at all.
#pragma once

#include <loom/loom.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <vector>

#include "tensor_types.h"

namespace loom_torch {

class LoomWork;

// Finishes works nobody waits for, off Loom's threads: one per process group.
class CompletionThread {
 public:
  CompletionThread();
  ~CompletionThread();  // finishes what is queued, then stops
  void push(c10::intrusive_ptr<LoomWork> work);

 private:
  void run();
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<c10::intrusive_ptr<LoomWork>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

class LoomWork : public c10d::Work {
 public:
  // `outputs`: what Loom writes (copied back when staged); `inputs`: what
  // it reads, kept alive until the work ends; `value`: the future's value.
  LoomWork(int rank, c10d::OpType type, const char* operation, std::vector<Staged> outputs,
           std::vector<at::Tensor> inputs, std::vector<at::Tensor> value, CompletionThread& completions);
  ~LoomWork() override;

  // Hands over the launched requests (all of them, even failed launches:
  // null ones are skipped) and asks Loom to call back when they end.
  void start(std::vector<loomRequest_t> requests);

  bool isCompleted() override;
  bool isSuccess() const override;
  std::exception_ptr exception() const override;
  std::vector<at::Tensor> result() override;
  // A recv from any source: the sender's rank, once completed.
  int sourceRank() const override;
  void reportSource(std::shared_ptr<int> source) { source_ = std::move(source); }
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;

  // Writes back staged outputs and completes the future, once, with the
  // first failure's sentence if any request failed.
  void finishOnce();

 private:
  static void requestEnded(loomRequest_t request, loomResult_t result, void* self);
  // wait()'s parts: drive every request to its end (or the timeout), and
  // take the work's end if it came while this thread waited.
  void waitForRequests(std::chrono::milliseconds timeout);
  void leaveWait();
  void noteFailure(loomResult_t result, const std::string& sentence);

  const char* operation_;
  std::vector<loomRequest_t> requests_;
  std::vector<Staged> outputs_;
  std::vector<at::Tensor> inputs_;
  std::vector<at::Tensor> value_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  CompletionThread& completions_;
  std::atomic<int> pending_{0};
  std::atomic<bool> finishing_{false};
  // A thread inside wait() takes the work's end from the callback, which
  // then wakes no completion thread: the blocking call's path.
  enum : int { kNobodyWaits, kWaiterInside, kEndedForWaiter };
  std::atomic<int> waiter_{kNobodyWaits};
  std::mutex failureMutex_;
  std::string failure_;  // the first failed request's sentence
  std::shared_ptr<int> source_;
};

}  // namespace loom_torch

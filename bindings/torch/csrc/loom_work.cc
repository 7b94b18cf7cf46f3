#include "loom_work.h"

#include <stdexcept>

namespace loom_torch {

CompletionThread::CompletionThread() : thread_([this] { run(); }) {}

CompletionThread::~CompletionThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_one();
  thread_.join();
}

void CompletionThread::push(c10::intrusive_ptr<LoomWork> work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(work));
  }
  changed_.notify_one();
}

void CompletionThread::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing left
    c10::intrusive_ptr<LoomWork> work = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    work->finishOnce();
    work.reset();  // may destroy the work: off the lock
    lock.lock();
  }
}

LoomWork::LoomWork(int rank, c10d::OpType type, const char* operation, std::vector<Staged> outputs,
                   std::vector<at::Tensor> inputs, std::vector<at::Tensor> value, CompletionThread& completions)
    : c10d::Work(rank, type),
      operation_(operation),
      outputs_(std::move(outputs)),
      inputs_(std::move(inputs)),
      value_(std::move(value)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))),
      completions_(completions) {}

LoomWork::~LoomWork() {
  for (loomRequest_t request : requests_) loomRequestFree(request);
}

void LoomWork::start(std::vector<loomRequest_t> requests) {
  for (loomRequest_t request : requests)
    if (request != nullptr) requests_.push_back(request);
  pending_.store(static_cast<int>(requests_.size()) + 1);  // + 1: this call's own hold
  // Loom holds a raw pointer until the last request ends; this reference
  // keeps the work alive that long, and goes to the completion thread.
  c10::raw::intrusive_ptr::incref(this);
  for (loomRequest_t request : requests_) {
    const loomResult_t result = loomRequestSetCallback(request, requestEnded, this);
    if (result != loomSuccess) {
      noteFailure(result, loomGetLastError());
      pending_.fetch_sub(1);
    }
  }
  // Released here, so a work whose requests all ended already is queued.
  requestEnded(nullptr, loomSuccess, this);
}

void LoomWork::requestEnded(loomRequest_t request, loomResult_t result, void* self) {
  auto* work = static_cast<LoomWork*>(self);
  if (request != nullptr && result != loomSuccess && loomWait(request, 0) == result)
    work->noteFailure(result, loomGetLastError());
  if (work->pending_.fetch_sub(1) != 1) return;
  int waiting = kWaiterInside;
  if (work->waiter_.compare_exchange_strong(waiting, kEndedForWaiter)) return;  // the waiter finishes it
  work->completions_.push(c10::intrusive_ptr<LoomWork>::reclaim(work));
}

void LoomWork::noteFailure(loomResult_t result, const std::string& sentence) {
  std::lock_guard<std::mutex> lock(failureMutex_);
  if (!failure_.empty()) return;
  // A timeout says so in the words torch's own tests and users' scripts
  // look for (" timeout "), before Loom's sentence naming the rank.
  if (result == loomTimeout) failure_ = std::string("timeout in ") + operation_ + ": ";
  failure_ += sentence.empty() ? "an operation failed without a sentence" : sentence;
}

void LoomWork::finishOnce() {
  if (finishing_.exchange(true)) return;
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(failureMutex_);
    if (!failure_.empty())
      error = std::make_exception_ptr(std::runtime_error(std::string("loom backend: ") + failure_));
  }
  if (!error) {
    try {
      for (Staged& output : outputs_) output.finish();
    } catch (...) {
      error = std::current_exception();
    }
  }
  inputs_.clear();
  if (error)
    future_->setError(error);
  else
    future_->markCompleted(c10::IValue(value_));
  finish(error);
}

bool LoomWork::isCompleted() {
  if (finishing_.load()) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (completed_) return true;
  }
  for (loomRequest_t request : requests_) {
    int done = 0;
    const loomResult_t result = loomTest(request, &done);
    if (result != loomSuccess) noteFailure(result, loomGetLastError());
    if (!done) return false;
  }
  finishOnce();
  return true;
}

bool LoomWork::isSuccess() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_ && !exception_;
}

std::exception_ptr LoomWork::exception() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return exception_;
}

int LoomWork::sourceRank() const {
  if (!source_) return c10d::Work::sourceRank();  // not a recv from any source: torch's refusal
  TORCH_CHECK(*source_ >= 0, "loom backend: ", operation_, " has not received its message yet: wait() for it first");
  return *source_;
}

std::vector<at::Tensor> LoomWork::result() {
  return value_;
}

bool LoomWork::wait(std::chrono::milliseconds timeout) {
  int nobody = kNobodyWaits;
  const bool claimed = waiter_.compare_exchange_strong(nobody, kWaiterInside);
  try {
    waitForRequests(timeout);
  } catch (...) {
    if (claimed) leaveWait();
    throw;
  }
  if (claimed) leaveWait();
  finishOnce();
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [this] { return completed_; });  // another thread may be finishing it
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

void LoomWork::leaveWait() {
  if (waiter_.exchange(kNobodyWaits) != kEndedForWaiter) return;
  // The work ended while this thread waited: the callback left its hold here.
  finishOnce();
  c10::intrusive_ptr<LoomWork>::reclaim(this);  // dropped at once
}

void LoomWork::waitForRequests(std::chrono::milliseconds timeout) {
  const bool forever = timeout == kNoTimeout;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (loomRequest_t request : requests_) {
    int64_t ms = -1;
    if (!forever) {
      ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
      if (ms < 0) ms = 0;
    }
    loomResult_t result = loomWait(request, ms);
    if (result == loomTimeout) {
      int done = 0;
      if (loomTest(request, &done) == loomSuccess && !done)
        TORCH_CHECK(false, "loom backend: timeout in ", operation_, ": not done after ", timeout.count(),
                    " ms; it keeps running, and a later wait may still see it end");
      result = loomWait(request, 0);  // it ended meanwhile: its own outcome
    }
    // The callback notes it too, but may still be running on Loom's thread.
    if (result != loomSuccess) noteFailure(result, loomGetLastError());
  }
}

c10::intrusive_ptr<c10::ivalue::Future> LoomWork::getFuture() {
  return future_;
}

}  // namespace loom_torch

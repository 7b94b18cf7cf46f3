#include "core/request.h"

#include <chrono>

namespace loom {

void Request::complete(loomResult_t result, std::string error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    result_ = result;
    error_ = std::move(error);
    done_ = true;
  }
  doneChanged_.notify_all();
}

bool Request::done() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

loomResult_t Request::wait(int64_t timeoutMs) {
  if (timeoutMs < 0) timeoutMs = defaultTimeoutMs_;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!doneChanged_.wait_for(lock, std::chrono::milliseconds(timeoutMs), [this] { return done_; })) return loomTimeout;
  return result_;
}

loomResult_t Request::waitUntilDone() {
  std::unique_lock<std::mutex> lock(mutex_);
  doneChanged_.wait(lock, [this] { return done_; });
  return result_;
}

std::string Request::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

}  // namespace loom

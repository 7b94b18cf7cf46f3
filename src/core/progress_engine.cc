#include "core/progress_engine.h"

#include <pthread.h>

namespace loom {

ProgressEngine::ProgressEngine() : worker_([this] { workerLoop(); }) {}

ProgressEngine::~ProgressEngine() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  workToDo_.notify_all();
  worker_.join();
}

void ProgressEngine::post(Task task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(task));
  }
  workToDo_.notify_one();
}

bool ProgressEngine::claimIfIdle() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (busy_ || !queue_.empty()) return false;
  busy_ = true;
  return true;
}

void ProgressEngine::releaseClaim() {
  bool queued = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    busy_ = false;
    queued = !queue_.empty();
  }
  // Wake the worker only if a task arrived meanwhile: an unconditional wake
  // costs the idle worker a context switch per blocking call.
  if (queued) workToDo_.notify_one();
  idle_.notify_all();
}

void ProgressEngine::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void ProgressEngine::workerLoop() {
  pthread_setname_np(pthread_self(), "loom-progress");
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    workToDo_.wait(lock, [this] { return (!queue_.empty() && !busy_) || (stopping_ && queue_.empty() && !busy_); });
    if (queue_.empty()) return;  // stopping, and nothing left to run
    Task task = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    task();
    lock.lock();
    busy_ = false;
    idle_.notify_all();
  }
}

}  // namespace loom

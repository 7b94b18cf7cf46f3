// Runs a communicator's operations one after another, in issue order, on a
// background thread, so the caller is free to compute while they progress.
// A blocking call on an idle communicator runs on the caller's own thread
// instead: handing it to the worker and back would cost two thread wake-ups,
// which is most of a small collective's latency.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace loom {

class ProgressEngine {
 public:
  using Task = std::function<void()>;  // must not throw

  ProgressEngine();
  ~ProgressEngine();  // finishes every posted task, then stops the worker
  ProgressEngine(const ProgressEngine&) = delete;
  ProgressEngine& operator=(const ProgressEngine&) = delete;

  // Queues task behind everything posted before it.
  void post(Task task);
  // Runs task now on this thread if nothing is queued or running (returns
  // true); otherwise does nothing and returns false. A template, so the
  // blocking fast path wraps nothing in a std::function.
  template <typename F>
  bool runInlineIfIdle(F&& task) {
    if (!claimIfIdle()) return false;
    task();
    releaseClaim();
    return true;
  }
  // Waits until every posted task has run.
  void drain();

 private:
  void workerLoop();
  bool claimIfIdle();
  void releaseClaim();

  std::mutex mutex_;
  std::condition_variable workToDo_;  // the worker waits here for tasks
  std::condition_variable idle_;      // drain() waits here for an empty, idle engine
  std::deque<Task> queue_;
  bool busy_ = false;  // a task is running, on the worker or inline
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace loom

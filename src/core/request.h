// The completion state of one posted operation, shared by the engine (which
// completes it) and the caller's handle (which waits on it). Waiting drives
// the engine on the waiting thread (engine.h), so a posted-then-waited call
// costs what a blocking one costs.
#pragma once

#include <loom/loom.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace loom {

class Engine;

class Request {
 public:
  explicit Request(std::weak_ptr<Engine> engine) : engine_(std::move(engine)) {}

  // Called once, by the engine; then runs the callback, if one is set.
  void complete(loomResult_t result, std::string&& error);
  // Runs `callback` once, when the operation ends: on the thread that ends
  // it, or on this one before returning if it has ended already. False if
  // a callback was set before (it stays).
  using Callback = std::function<void(loomResult_t)>;
  bool onComplete(Callback callback);
  bool done() const { return done_.load(std::memory_order_acquire); }
  // The engine has let go of the operation: nothing of it is touched any
  // more (a blocking call's operation lives on the caller's stack).
  void markRetired() { retired_.store(true, std::memory_order_release); }
  bool retired() const { return retired_.load(std::memory_order_acquire); }
  // done(), after a round of progress if no thread drives the engine.
  bool poll();
  // loomSuccess or the operation's error once done; loomTimeout if it is not
  // done within timeoutMs (-1: until it ends, which its own timeout bounds;
  // 0: just look).
  loomResult_t wait(int64_t timeoutMs);
  // The failure sentence; empty while pending or after success.
  std::string error() const { return done() ? error_ : std::string(); }
  loomResult_t result() const { return done() ? result_ : loomInProgress; }

 private:
  std::weak_ptr<Engine> engine_;  // gone once the communicator is, by which time every operation is done
  std::atomic<bool> done_{false};
  std::atomic<bool> retired_{false};
  loomResult_t result_ = loomInProgress;  // written before done_ is set
  std::string error_;
  // Whoever moves callbackState_ second (setting the callback, or
  // completing) runs the callback: exactly once, whatever the race.
  enum : int { kNoCallback, kCallbackSet, kCompleted };
  std::atomic<int> callbackState_{kNoCallback};
  std::atomic<bool> callbackClaimed_{false};  // a second onComplete is refused, even racing the first
  Callback callback_;
};

}  // namespace loom

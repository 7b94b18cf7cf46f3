// The completion state of one posted operation, shared by the progress
// engine (which completes it) and the caller's handle (which waits on it).
#pragma once

#include <loom/loom.h>

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>

namespace loom {

class Request {
 public:
  explicit Request(int64_t defaultTimeoutMs) : defaultTimeoutMs_(defaultTimeoutMs) {}

  void complete(loomResult_t result, std::string error);
  bool done() const;
  // loomSuccess or the operation's error once done; loomTimeout if it is not
  // done within timeoutMs (-1: the communicator's timeout, 0: just look).
  loomResult_t wait(int64_t timeoutMs);
  // For blocking calls: the operation bounds its own waits by the timeout.
  loomResult_t waitUntilDone();
  // The failure sentence; empty while pending or after success.
  std::string error() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable doneChanged_;
  bool done_ = false;
  loomResult_t result_ = loomInProgress;
  std::string error_;
  int64_t defaultTimeoutMs_;
};

}  // namespace loom

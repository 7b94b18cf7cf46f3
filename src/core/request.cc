#include "core/request.h"

#include "base/deadline.h"
#include "core/engine.h"

namespace loom {

void Request::complete(loomResult_t result, std::string&& error) {
  result_ = result;
  if (!error.empty()) error_ = std::move(error);  // on every call's path: success moves nothing
  done_.store(true, std::memory_order_release);
  if (callbackState_.exchange(kCompleted, std::memory_order_acq_rel) == kCallbackSet) callback_(result_);
}

bool Request::onComplete(Callback callback) {
  if (callbackClaimed_.exchange(true, std::memory_order_acq_rel)) return false;
  callback_ = std::move(callback);
  const int before = callbackState_.exchange(kCallbackSet, std::memory_order_acq_rel);
  if (before == kCompleted) {
    callbackState_.store(kCompleted, std::memory_order_relaxed);
    callback_(result_);
  }
  return true;
}

bool Request::poll() {
  if (done()) return true;
  if (std::shared_ptr<Engine> engine = engine_.lock()) engine->poke();
  return done();
}

loomResult_t Request::wait(int64_t timeoutMs) {
  // -1 waits for the operation's own end: its waits are bounded by the
  // communicator's timeout already, and when one expires its sentence names
  // the rank it waited for, which a deadline of our own would pre-empt.
  const Deadline deadline = timeoutMs < 0 ? Deadline::never() : Deadline::afterMs(timeoutMs);
  if (!done()) {
    if (std::shared_ptr<Engine> engine = engine_.lock()) engine->waitFor(*this, deadline);
  }
  return done() ? result_ : loomTimeout;
}

}  // namespace loom

#include "core/request.h"

#include "base/deadline.h"
#include "core/engine.h"

namespace loom {

void Request::complete(loomResult_t result, std::string error) {
  result_ = result;
  error_ = std::move(error);
  done_.store(true, std::memory_order_release);
}

bool Request::poll() {
  if (done()) return true;
  if (std::shared_ptr<Engine> engine = engine_.lock()) engine->poke();
  return done();
}

loomResult_t Request::wait(int64_t timeoutMs) {
  if (timeoutMs < 0) timeoutMs = defaultTimeoutMs_;
  if (!done()) {
    if (std::shared_ptr<Engine> engine = engine_.lock()) engine->waitFor(*this, Deadline::afterMs(timeoutMs));
  }
  return done() ? result_ : loomTimeout;
}

loomResult_t Request::waitUntilDone() {
  if (!done()) {
    if (std::shared_ptr<Engine> engine = engine_.lock()) engine->waitFor(*this, Deadline::never());
  }
  return result_;
}

}  // namespace loom

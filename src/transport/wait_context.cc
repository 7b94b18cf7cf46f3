#include "transport/wait_context.h"

#include "base/error.h"
#include "transport/connection.h"

namespace loom {

std::string WaitContext::describe() const {
  std::string text = std::string(operation) + " #" + std::to_string(sequence);
  // Labels and peers count collectives alone; say which one this is when
  // point-to-point operations made the two numbers differ.
  if (call != nullptr && call->number != sequence) text += " (collective #" + std::to_string(call->number) + ")";
  text += " on rank " + std::to_string(rank);
  if (commName != nullptr && !commName->empty()) text += " of communicator '" + *commName + "'";
  return text;
}

std::string WaitContext::describeMismatch(int peer, const CollectiveCall& theirs) const {
  return describe() + " does not match rank " + std::to_string(peer) + ": that rank called " + theirs.describe() +
         ", this rank " + (call != nullptr ? call->describe() : std::string("no collective")) +
         " (every rank must make the same collective calls, in the same order, with the same count, datatype, op "
         "and root)";
}

}  // namespace loom

namespace loom {

void WaitContext::park(std::coroutine_handle<> handle, Waitable& on) const {
  if (suspension == nullptr)
    fail(loomInternalError, describe() + " had to wait outside the engine (a schedule run without a place to park)");
  suspension->handle = handle;
  suspension->on = &on;
}

void WaitContext::failResumedTooEarly(int peer) const {
  fail(loomInternalError,
       describe() + " was resumed before its connection with rank " + std::to_string(peer) + " could move");
}

}  // namespace loom

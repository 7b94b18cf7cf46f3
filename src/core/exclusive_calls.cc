#include "core/exclusive_calls.h"

#include <string>
#include <thread>

#include "base/error.h"

namespace loom {
namespace {

// A token unique to each live thread: the address of a thread-local.
// Initial-exec: on every call's path, and without it each read of a
// shared library's thread-local is a call to __tls_get_addr.
[[gnu::tls_model("initial-exec")]] thread_local char token;

const void* threadToken() {
  return &token;
}

}  // namespace

ExclusiveCalls::Scope ExclusiveCalls::enter(const char* name, int rank) {
  const void* mine = threadToken();
  const void* expected = nullptr;
  if (thread_.compare_exchange_strong(expected, mine, std::memory_order_acquire)) {
    name_.store(name, std::memory_order_relaxed);
    return Scope(this);
  }
  if (expected == mine) return Scope(nullptr);  // re-entered from inside this thread's own call
  // The other thread names its call just after it enters: a refusal that
  // comes in between waits (briefly, and only on this error path) to name
  // it rather than say "call".
  const char* theirs = name_.load(std::memory_order_relaxed);
  for (int i = 0; theirs == nullptr && i < 1000 && thread_.load(std::memory_order_relaxed) == expected; ++i) {
    std::this_thread::yield();
    theirs = name_.load(std::memory_order_relaxed);
  }
  fail(loomInvalidUsage,
       std::string(name) + " on rank " + std::to_string(rank) + " was called while another thread's " +
           (theirs != nullptr ? theirs : "call") +
           " on it has not returned: a communicator takes one call at a time (the ranks would pair up different "
           "calls otherwise); give each thread its own communicator (loomCommSplit), or serialize the calls and "
           "issue them in the same order on every rank");
}

void ExclusiveCalls::leave() {
  name_.store(nullptr, std::memory_order_relaxed);
  thread_.store(nullptr, std::memory_order_release);
}

}  // namespace loom

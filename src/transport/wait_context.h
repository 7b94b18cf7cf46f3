// What an operation's schedule carries to every wait: the words for a
// failure sentence (operation, sequence number, ranks), the communicator's
// abort flag, and where to park when a connection cannot move yet, so the
// engine can resume the schedule there (connection.h).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <coroutine>
#include <cstdint>
#include <string>

#include "transport/collective_call.h"
#include "transport/message_label.h"

namespace loom {

class Waitable;

// Where an operation's schedule stopped: the innermost coroutine, and the
// connection it waits on. Owned by the engine's record of the operation.
struct Suspension {
  std::coroutine_handle<> handle;
  Waitable* on = nullptr;
};

struct WaitContext {
  int64_t timeoutMs = 0;  // longest a single wait may make no progress
  const std::atomic<bool>* aborted = nullptr;
  int rank = -1;
  const char* operation = "";             // "AllReduce", ...
  uint64_t sequence = 0;                  // the operation's number on this communicator
  const CollectiveCall* call = nullptr;   // this rank's collective; null for Send/Recv
  // What this operation's messages carry, and what it expects. A Recv
  // learns the number of the message it takes (and a Recv from any source
  // its sender) only when it matches one: it sets its label then.
  mutable MessageLabel label;
  const std::string* commName = nullptr;  // the communicator's name, may be empty
  Suspension* suspension = nullptr;       // null outside the engine (nothing may park)
  // Where the schedule notes the algorithm it chose (the operation's flight
  // recorder entry); may be null.
  std::atomic<const char*>* algorithm = nullptr;

  // Records where the schedule stopped (SlotAwaiter calls it).
  void park(std::coroutine_handle<> handle, Waitable& on) const;
  [[noreturn]] void failResumedTooEarly(int peer) const;

  // "AllReduce #12 on rank 1 of communicator 'x'", or "AllReduce #12
  // (collective #9) on rank 1" once Send/Recv made the numbers differ: the
  // start of every failure sentence.
  std::string describe() const;
  // The sentence for a peer whose call differs from this rank's (`call`).
  std::string describeMismatch(int peer, const CollectiveCall& theirs) const;
};

}  // namespace loom

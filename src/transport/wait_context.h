// What a blocked transport wait needs to know to fail well instead of
// hanging: when to give up, whether the communicator was aborted, and the
// words for the sentence (operation, sequence number, ranks).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "transport/collective_call.h"

namespace loom {

struct WaitContext {
  int64_t timeoutMs = 0;  // longest a single wait may make no progress
  const std::atomic<bool>* aborted = nullptr;
  int spinIterations = 1000;  // busy polls before yielding
  int64_t yieldMicros = 0;    // how long to keep yielding before sleeping on the futex
  int rank = -1;
  const char* operation = "";             // "AllReduce", ...
  uint64_t sequence = 0;                  // the operation's number on this communicator
  const CollectiveCall* call = nullptr;   // this rank's collective; null for Send/Recv
  const std::string* commName = nullptr;  // the communicator's name, may be empty

  // "AllReduce #12 on rank 1 (comm 'x')": the start of every failure sentence.
  std::string describe() const;
  // The sentence for a peer whose call differs from this rank's (`call`).
  std::string describeMismatch(int peer, const CollectiveCall& theirs) const;
};

}  // namespace loom

// The one interface between algorithms and transports: a one-way FIFO of
// fixed-size slots to or from one peer. The sender acquires a free slot (a
// pointer the peer will read in place), fills it and posts it; the receiver
// acquires the next filled slot, reads it in place and releases it. Slots
// travel in order, so sender and receiver agree on what each slot holds by
// running the same schedule; no headers are needed.
#pragma once

#include <cstddef>

#include "transport/wait_context.h"

namespace loom {

class SendConnection {
 public:
  virtual ~SendConnection() = default;
  virtual size_t slotBytes() const = 0;
  virtual int peer() const = 0;
  // Blocks until the peer has freed a slot; returns it for writing.
  virtual void* acquire(const WaitContext& ctx) = 0;
  // Hands the acquired slot to the peer.
  virtual void post() = 0;
};

class RecvConnection {
 public:
  virtual ~RecvConnection() = default;
  virtual size_t slotBytes() const = 0;
  virtual int peer() const = 0;
  // Blocks until the peer has posted a slot; returns it for reading.
  virtual const void* acquire(const WaitContext& ctx) = 0;
  // Gives the acquired slot back to the peer.
  virtual void release() = 0;
};

}  // namespace loom

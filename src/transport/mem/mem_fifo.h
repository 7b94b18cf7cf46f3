// The in-memory transport's connections: shared memory's FIFO protocol
// (a mark per slot, counters for flow control, a doorbell rung only for a
// watching peer) over a Fabric's plain memory, with the message's label
// and length kept beside the slot rather than in front of its data (the
// form a slot in device memory or a remote window takes), and with the
// delivery delay the fabric injects.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transport/connection.h"
#include "transport/mem/mem_fabric.h"

namespace loom::mem {

// Throws naming `peer` if it failed, called something else, or left with
// nothing still on its way to this side (`inFlight`: messages it posted
// that a delay still holds back); shared by both sides of a connection.
void checkPeer(const Fabric& fabric, int peer, const WaitContext& ctx, Waitable& connection, bool inFlight);

class MemSendConnection final : public SendConnection {
 public:
  MemSendConnection(Fabric& fabric, int self, int peer, Channel channel);
  size_t slotBytes() const override { return fabric_.shape().bytes; }
  int peer() const override { return peer_; }
  void* tryAcquire() override;
  void labelSlot(void* slot, const MessageLabel& label) override;
  void post(size_t bytes) override;
  void checkPeer(const WaitContext& ctx) override { mem::checkPeer(fabric_, peer_, ctx, *this, false); }
  void watch(bool on) override { fifo_.releasedWatched.store(on ? 1 : 0, std::memory_order_relaxed); }

 private:
  MemSlot& next() const { return fifo_.slots[posted_ % slots_]; }

  Fabric& fabric_;
  MemFifo& fifo_;
  int self_;
  int peer_;
  uint32_t slots_;
  uint32_t posted_ = 0;
};

class MemRecvConnection final : public RecvConnection {
 public:
  MemRecvConnection(Fabric& fabric, int self, int peer, Channel channel);
  size_t slotBytes() const override { return fabric_.shape().bytes; }
  int peer() const override { return peer_; }
  const void* tryAcquire() override;
  void release() override;
  size_t acquiredBytes() const override { return next().bytes; }
  MessageLabel labelOf(const void* slot) const override;
  void checkPeer(const WaitContext& ctx) override {
    mem::checkPeer(fabric_, peer_, ctx, *this, fifo_.posted.load(std::memory_order_acquire) != released_);
  }
  void watch(bool on) override { fifo_.postedWatched.store(on ? 1 : 0, std::memory_order_relaxed); }

 private:
  MemSlot& next() const { return fifo_.slots[released_ % slots_]; }

  Fabric& fabric_;
  MemFifo& fifo_;
  int peer_;
  int self_;
  uint32_t slots_;
  uint32_t released_ = 0;
};

}  // namespace loom::mem

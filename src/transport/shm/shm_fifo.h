// A FIFO in shared memory from one sender to one receiver: two counters on
// cache lines of their own, then `slots` slots of `slotBytes`. The receiver
// owns the memory (it lives in the receiver's segment); both map it.
//
// Each slot starts with a mark: the sender stores the slot's message number
// there after the data, and the receiver watches the mark rather than the
// `posted` counter. The message's label (message_label.h) follows the mark,
// then the data. A small message, its label and its mark share one cache line,
// so the hand-over costs one line moving between cores instead of three
// (posted counter, data, released counter). The counters remain for flow
// control, which the sender checks only when its last look at `released`
// says the FIFO may be full, and for checking that both sides agree on the
// stream's position. A post or release rings the peer's doorbell
// (base/doorbell.h) only if the peer's engine sleeps waiting on this FIFO.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "base/doorbell.h"
#include "transport/connection.h"
#include "transport/shm/shm_status.h"

namespace loom::shm {

struct FifoHeader {
  alignas(64) std::atomic<uint32_t> posted;    // bumped by the sender
  std::atomic<uint32_t> postedWatched;         // the receiver sleeps until the next post (Waitable::watch)
  alignas(64) std::atomic<uint32_t> released;  // bumped by the receiver
  std::atomic<uint32_t> releasedWatched;       // the sender sleeps until the next release
};

struct FifoGeometry {
  size_t slotBytes;
  int slots;
  // Bytes one FIFO takes, rounded to a page so FIFOs stay page-aligned.
  size_t bytes() const;
  static constexpr size_t kHeaderBytes = 4096;
  // A slot: the mark (8 bytes), the label (24), the data, padding to a
  // cache line.
  static constexpr size_t kMarkBytes = 8;
  static constexpr size_t kSlotHeaderBytes = kMarkBytes + sizeof(MessageLabel);
  size_t slotStride() const { return (kSlotHeaderBytes + slotBytes + 63) / 64 * 64; }
};

// The peer at the other end: who it is, and where it announces itself.
struct FifoPeer {
  int rank;
  pid_t pid;
  StatusPage* status;  // its status page, holding its doorbell
};

class ShmSendConnection final : public SendConnection {
 public:
  ShmSendConnection(void* fifo, FifoGeometry geometry, FifoPeer peer);
  size_t slotBytes() const override { return geometry_.slotBytes; }
  int peer() const override { return peer_.rank; }
  void* tryAcquire() override;
  void post(size_t bytes) override;
  void checkPeer(const WaitContext& ctx) override;
  void watch(bool on) override { header_->releasedWatched.store(on ? 1 : 0, std::memory_order_relaxed); }

 private:
  char* slot(uint32_t number) const;

  FifoHeader* header_;
  char* slots_;
  FifoGeometry geometry_;
  FifoPeer peer_;
  uint32_t posted_;        // this side's copy: only the sender writes `posted`
  uint32_t releasedSeen_;  // `released` when last read: a lower bound of it
  char* next_;             // slot(posted_), kept so that polls do no division
};

class ShmRecvConnection final : public RecvConnection {
 public:
  ShmRecvConnection(void* fifo, FifoGeometry geometry, FifoPeer peer);
  size_t slotBytes() const override { return geometry_.slotBytes; }
  int peer() const override { return peer_.rank; }
  const void* tryAcquire() override;
  void release() override;
  void checkPeer(const WaitContext& ctx) override;
  void watch(bool on) override { header_->postedWatched.store(on ? 1 : 0, std::memory_order_relaxed); }

 private:
  const char* slot(uint32_t number) const;

  FifoHeader* header_;
  const char* slots_;
  FifoGeometry geometry_;
  FifoPeer peer_;
  uint32_t released_;  // this side's copy: only the receiver writes `released`
  const char* next_;   // slot(released_), kept so that polls do no division
};

}  // namespace loom::shm

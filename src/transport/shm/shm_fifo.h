// A FIFO in shared memory from one sender to one receiver: two counters on
// cache lines of their own, then `slots` slots of `slotBytes`. The receiver
// owns the memory (it lives in the receiver's segment); both map it.
//
// Each slot starts with a mark: the sender stores the slot's message number
// there after the data, and a polling receiver watches the mark rather than
// the `posted` counter. A small message and its mark then share one cache
// line, so the hand-over costs one line moving between cores instead of
// three (posted counter, data, released counter). The counters remain for
// sleeping waits (futex) and for flow control, which the sender checks only
// when its last look at `released` says the FIFO may be full.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "transport/connection.h"
#include "transport/shm/futex_counter.h"

namespace loom::shm {

struct FifoHeader {
  FutexCounter posted;    // bumped by the sender
  FutexCounter released;  // bumped by the receiver
};

struct FifoGeometry {
  size_t slotBytes;
  int slots;
  // Bytes one FIFO takes, rounded to a page so FIFOs stay page-aligned.
  size_t bytes() const;
  static constexpr size_t kHeaderBytes = 4096;
  // A slot: the mark (8 bytes), the data, padding to a cache line.
  static constexpr size_t kMarkBytes = 8;
  size_t slotStride() const { return (kMarkBytes + slotBytes + 63) / 64 * 64; }
};

class ShmSendConnection final : public SendConnection {
 public:
  ShmSendConnection(void* fifo, FifoGeometry geometry, int peerRank, pid_t peerPid, const StatusPage* peerStatus);
  size_t slotBytes() const override { return geometry_.slotBytes; }
  int peer() const override { return peerRank_; }
  void* acquire(const WaitContext& ctx) override;
  void post() override;

 private:
  char* slot(uint32_t number) const;

  FifoHeader* header_;
  char* slots_;
  FifoGeometry geometry_;
  int peerRank_;
  pid_t peerPid_;
  const StatusPage* peerStatus_;
  uint32_t posted_;        // this side's copy: only the sender writes `posted`
  uint32_t releasedSeen_;  // `released` when last read: a lower bound of it
};

class ShmRecvConnection final : public RecvConnection {
 public:
  ShmRecvConnection(void* fifo, FifoGeometry geometry, int peerRank, pid_t peerPid, const StatusPage* peerStatus);
  size_t slotBytes() const override { return geometry_.slotBytes; }
  int peer() const override { return peerRank_; }
  const void* acquire(const WaitContext& ctx) override;
  void release() override;

 private:
  const char* slot(uint32_t number) const;

  FifoHeader* header_;
  const char* slots_;
  FifoGeometry geometry_;
  int peerRank_;
  pid_t peerPid_;
  const StatusPage* peerStatus_;
  uint32_t released_;  // this side's copy: only the receiver writes `released`
};

}  // namespace loom::shm

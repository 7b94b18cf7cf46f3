// What the engine and the TCP progress thread share for one peer: per
// direction and channel a ring of slots in this process's memory, and what
// the thread has heard from the peer. The engine fills send slots and reads
// receive slots in place, as it does a shared-memory FIFO; the thread moves
// them over the sockets, receiving each straight into the slot the engine
// will read. Counters are 64-bit: they never wrap.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "transport/collective_call.h"
#include "transport/message_label.h"

namespace loom::tcp {

struct RingGeometry {
  size_t slotBytes;
  int slots;
  // A slot: 8 spare bytes (so data starts 32 bytes in, as in a shared-memory
  // FIFO), the label, the data, padding to a cache line.
  static constexpr size_t kSpareBytes = 8;
  static constexpr size_t kHeaderBytes = kSpareBytes + sizeof(MessageLabel);
  size_t stride() const { return (kHeaderBytes + slotBytes + 63) / 64 * 64; }
};

// Slots of one ring, page-aligned.
class SlotMemory {
 public:
  explicit SlotMemory(RingGeometry geometry);
  ~SlotMemory();
  SlotMemory(const SlotMemory&) = delete;
  SlotMemory& operator=(const SlotMemory&) = delete;
  // Where slot `number`'s label starts (its data follows the label).
  char* label(uint64_t number) const {
    return base_ + (number % static_cast<uint64_t>(geometry_.slots)) * geometry_.stride() + RingGeometry::kSpareBytes;
  }
  char* data(uint64_t number) const { return label(number) + sizeof(MessageLabel); }
  const RingGeometry& geometry() const { return geometry_; }

 private:
  RingGeometry geometry_;
  char* base_;
  size_t bytes_;
};

// The engine posts, the thread sends. A slot is free again once `sent`
// passed it: its bytes are in the kernel's hands.
struct SendRing {
  explicit SendRing(RingGeometry geometry) : memory(geometry), bytes(geometry.slots, 0) {}
  SlotMemory memory;
  std::vector<uint32_t> bytes;  // data bytes of each posted slot, written before `posted`
  alignas(64) std::atomic<uint64_t> posted{0};
  alignas(64) std::atomic<uint64_t> sent{0};
  std::atomic<uint32_t> watched{0};  // the engine sleeps until `sent` moves
};

// The thread receives, the engine reads and releases. Slot n holds message
// n once its mark is n + 1.
struct RecvRing {
  explicit RecvRing(RingGeometry geometry)
      : memory(geometry), marks(std::make_unique<std::atomic<uint64_t>[]>(geometry.slots)), bytes(geometry.slots, 0) {
    for (int i = 0; i < geometry.slots; ++i) marks[i].store(0, std::memory_order_relaxed);
  }
  std::atomic<uint64_t>& markOf(uint64_t number) {
    return marks[number % static_cast<uint64_t>(memory.geometry().slots)];
  }
  SlotMemory memory;
  std::unique_ptr<std::atomic<uint64_t>[]> marks;
  std::vector<uint32_t> bytes;  // data bytes of each slot, written before its mark
  alignas(64) std::atomic<uint64_t> released{0};
  std::atomic<uint32_t> watched{0};  // the engine sleeps until a slot arrives
  // Sockets of this ring whose next frame waits for a free slot: only then
  // must a release wake the progress thread (a wake-up per message costs
  // the thread a run on oversubscribed cores).
  std::atomic<uint32_t> stalledReaders{0};
};

// What this rank knows of a TCP peer: written by the progress thread, read
// by the engine when it checks a wait (rarely: only before it sleeps).
class PeerState {
 public:
  bool broken() const { return broken_.load(std::memory_order_acquire); }
  // Why the connection ended; empty while it has not.
  std::string brokenBecause() const;
  void breakWith(const std::string& sentence);

  struct Heard {
    bool failed = false;
    std::string failure;
    bool beating = false;  // a heartbeat has arrived
    int64_t heardMs = 0;   // this host's clock when the last one did
    int waitingFor = -1;
    uint64_t collectivesStarted = 0;
    bool haveCall = false;
    CollectiveCall call;
  };
  Heard heard() const;
  void heardFailure(const std::string& sentence);
  void heardHeartbeat(int64_t nowMs, int waitingFor, uint64_t collectivesStarted, const CollectiveCall& call);

 private:
  std::atomic<bool> broken_{false};
  mutable std::mutex mutex_;
  std::string brokenBecause_;
  Heard heard_;
};

}  // namespace loom::tcp

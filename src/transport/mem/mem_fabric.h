// The in-memory transport's shared state: every rank of one process-local
// group, its FIFOs to every other rank, and the board each rank announces
// itself on (as shared memory's status page, in plain memory). Ranks are
// threads of this process, or virtual ranks that one thread drives.
//
// Faults are injected here, where the ranks meet:
// - delay: each message becomes visible to its receiver only after a
//   random delay of up to Faults::maxDelayMicros; a connection's messages
//   keep their order, messages of different connections (other peers,
//   other channels) overtake one another;
// - failure: fail() makes a rank look as if it announced a failure, and
//   leave() as if its process exited, to every peer that waits on it.
//
// A pair's FIFOs are made when a connection first uses them, and a slot
// holds a buffer only while a message is in it (buffers go back to the
// fabric when released), so a fabric of thousands of ranks costs what its
// schedules use. With a Timeline (mem_timeline.h), which needs one thread
// to drive every rank, messages carry virtual times.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/doorbell.h"
#include "base/error.h"
#include "transport/collective_call.h"
#include "transport/mem/mem_timeline.h"
#include "transport/message_label.h"
#include "transport/registry.h"
#include "transport/transport.h"

namespace loom::mem {

struct Faults {
  int64_t maxDelayMicros = 0;  // 0: every message is visible once posted
  uint64_t seed = 1;           // of the delays' random sequence, per connection
  bool singleCopy = true;      // offer PeerMemory (peers' buffers are this process's)
};

// A rank as its peers see it.
struct RankBoard {
  Doorbell doorbell;  // its engine sleeps here
  std::atomic<uint64_t> collectivesStarted{0};
  std::atomic<bool> failed{false};
  std::atomic<bool> left{false};
  std::atomic<int64_t> heartbeatMs{0};
  std::atomic<int> waitingFor{-1};

  void publishCall(const CollectiveCall& call);
  std::optional<CollectiveCall> readCall() const;
  // The first failure sentence announced; later ones are dropped.
  void publishFailure(const std::string& sentence);
  std::string failure() const;

 private:
  mutable std::mutex mutex_;
  std::optional<CollectiveCall> call_;
  std::string failure_;
};

struct MemSlot {
  std::atomic<uint32_t> mark{0};  // the message's number once posted (as shm's slot mark)
  MessageLabel label;             // kept beside the data, not in front of it
  size_t bytes = 0;
  int64_t visibleAtNs = 0;       // steady clock; 0: at once
  std::unique_ptr<char[]> data;  // from the fabric's spare buffers while a message is in the slot
  // With a Timeline: the message's stamp (its arrival, its step), and when its receiver freed the slot.
  Timeline::Stamp stamp;
  double freedAtUs = 0;
};

// One way from a sender to a receiver on one channel.
struct MemFifo {
  std::unique_ptr<MemSlot[]> slots;
  std::atomic<uint32_t> posted{0};
  std::atomic<uint32_t> released{0};
  std::atomic<uint32_t> postedWatched{0};    // the receiver sleeps until the next post
  std::atomic<uint32_t> releasedWatched{0};  // the sender sleeps until the next release
  // The sender's alone:
  int64_t lastVisibleNs = 0;
  std::mt19937_64 random;
};

// takeBuffer would pass the limit set by limitBuffers.
class BufferLimitReached : public Error {
 public:
  using Error::Error;
};

class Fabric {
 public:
  // `timeline`, if any, must be driven by one thread (mem_timeline.h).
  Fabric(int nranks, SlotShape shape, Faults faults, std::unique_ptr<Timeline> timeline = nullptr);
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  int nranks() const { return nranks_; }
  SlotShape shape() const { return shape_; }
  const Faults& faults() const { return faults_; }
  bool delays() const { return faults_.maxDelayMicros > 0; }
  // Made on first use; it stays where it is for the fabric's life.
  MemFifo& fifo(int from, int to, Channel channel);
  // A slot's buffer (shape().bytes), and its return once a message is read.
  // Throws BufferLimitReached where more than the limit would be out at once.
  std::unique_ptr<char[]> takeBuffer();
  // At most `buffers` slot buffers at once (0: no limit); `what` says why in the error.
  void limitBuffers(size_t buffers, std::string what) {
    bufferLimit_ = buffers;
    bufferLimitWhat_ = std::move(what);
  }
  void giveBack(std::unique_ptr<char[]> buffer);
  Timeline* timeline() { return timeline_.get(); }
  RankBoard& board(int rank) { return boards_[rank]; }
  const RankBoard& board(int rank) const { return boards_[rank]; }

  // When a message posted now on `fifo` to `receiver` becomes visible (0:
  // at once). A delayed one rings the receiver's doorbell when it comes due.
  int64_t deliveryTime(MemFifo& fifo, int receiver);

  // Failure injection: `rank` looks failed, with `sentence`, or gone.
  void fail(int rank, const std::string& sentence);
  void leave(int rank);

 private:
  // The delivery clock: rings doorbells as delayed messages come due.
  void clockLoop();

  int nranks_;
  SlotShape shape_;
  Faults faults_;
  std::unique_ptr<RankBoard[]> boards_;
  std::unique_ptr<Timeline> timeline_;
  std::mutex fifosMutex_;
  std::unordered_map<size_t, std::unique_ptr<MemFifo>> fifos_;  // by (channel, from, to)
  std::mutex buffersMutex_;
  std::vector<std::unique_ptr<char[]>> spareBuffers_;
  size_t buffersMade_ = 0;
  size_t bufferLimit_ = 0;
  std::string bufferLimitWhat_;

  using Due = std::pair<int64_t, int>;  // (steady ns, receiver)
  std::mutex clockMutex_;
  std::condition_variable clockChanged_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> dues_;
  bool stopping_ = false;
  std::thread clock_;
};

int64_t steadyNanos();

}  // namespace loom::mem

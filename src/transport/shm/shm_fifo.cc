#include "transport/shm/shm_fifo.h"

#include <unistd.h>

#include <string>

#include "core/error.h"

namespace loom::shm {
namespace {

std::atomic<uint32_t>& markOf(const char* slot) {
  return *reinterpret_cast<std::atomic<uint32_t>*>(const_cast<char*>(slot));
}

}  // namespace

size_t FifoGeometry::bytes() const {
  size_t raw = kHeaderBytes + slotStride() * static_cast<size_t>(slots);
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (raw + page - 1) / page * page;
}

ShmSendConnection::ShmSendConnection(void* fifo, FifoGeometry geometry, int peerRank, pid_t peerPid,
                                     const StatusPage* peerStatus)
    : header_(static_cast<FifoHeader*>(fifo)),
      slots_(static_cast<char*>(fifo) + FifoGeometry::kHeaderBytes),
      geometry_(geometry),
      peerRank_(peerRank),
      peerPid_(peerPid),
      peerStatus_(peerStatus),
      posted_(header_->posted.value.load(std::memory_order_relaxed)),
      releasedSeen_(header_->released.value.load(std::memory_order_relaxed)) {}

char* ShmSendConnection::slot(uint32_t number) const {
  return slots_ + (number % static_cast<uint32_t>(geometry_.slots)) * geometry_.slotStride();
}

void* ShmSendConnection::acquire(const WaitContext& ctx) {
  // Unsigned differences stay right when the 32-bit counters wrap.
  const uint32_t slots = static_cast<uint32_t>(geometry_.slots);
  if (posted_ - releasedSeen_ >= slots) {
    releasedSeen_ = header_->released.value.load(std::memory_order_acquire);
    if (releasedSeen_ - posted_ <= slots && releasedSeen_ != posted_)
      fail(loomInternalError, ctx.describe() + ": the FIFO to rank " + std::to_string(peerRank_) +
                                  " is out of step: that rank released " + std::to_string(releasedSeen_) +
                                  " slots but only " + std::to_string(posted_) + " were posted");
    while (posted_ - releasedSeen_ >= slots)
      releasedSeen_ =
          waitForChange(header_->released, releasedSeen_, ctx, {peerRank_, peerPid_, peerStatus_, "to free a slot"});
  }
  return slot(posted_) + FifoGeometry::kMarkBytes;
}

void ShmSendConnection::post() {
  markOf(slot(posted_)).store(posted_ + 1, std::memory_order_release);
  header_->posted.publish(++posted_);
}

ShmRecvConnection::ShmRecvConnection(void* fifo, FifoGeometry geometry, int peerRank, pid_t peerPid,
                                     const StatusPage* peerStatus)
    : header_(static_cast<FifoHeader*>(fifo)),
      slots_(static_cast<const char*>(fifo) + FifoGeometry::kHeaderBytes),
      geometry_(geometry),
      peerRank_(peerRank),
      peerPid_(peerPid),
      peerStatus_(peerStatus),
      released_(header_->released.value.load(std::memory_order_relaxed)) {}

const char* ShmRecvConnection::slot(uint32_t number) const {
  return slots_ + (number % static_cast<uint32_t>(geometry_.slots)) * geometry_.slotStride();
}

const void* ShmRecvConnection::acquire(const WaitContext& ctx) {
  const char* next = slot(released_);
  const std::atomic<uint32_t>& mark = markOf(next);
  const uint32_t expected = released_ + 1;
  for (int i = 0; i < ctx.spinIterations; ++i) {
    if (mark.load(std::memory_order_acquire) == expected) return next + FifoGeometry::kMarkBytes;
    cpuRelax();
  }
  // Not there yet: yield, then sleep, on the posted counter (the sender
  // publishes it after the mark). This wait has done its polling already.
  WaitContext patient = ctx;
  patient.spinIterations = 0;
  // The sender marks a slot before it counts it posted, so this side, having
  // taken the previous message by its mark, can be one ahead of `posted`:
  // wait until `posted` passes released_ (or the mark shows up), not merely
  // until it differs from released_.
  uint32_t posted = header_->posted.value.load(std::memory_order_acquire);
  while (static_cast<int32_t>(posted - released_) <= 0 && mark.load(std::memory_order_acquire) != expected)
    posted = waitForChange(header_->posted, posted, patient, {peerRank_, peerPid_, peerStatus_, "to send data"});
  // Either way the mark must be there now; if not, the two sides disagree on
  // the stream's position and reading on would hand stale bytes to the
  // algorithm.
  const uint32_t seen = mark.load(std::memory_order_acquire);
  if (seen != expected)
    fail(loomInternalError, ctx.describe() + ": the FIFO from rank " + std::to_string(peerRank_) +
                                " is out of step: its posted count is " + std::to_string(posted) +
                                ", this side has released " + std::to_string(released_) + ", but the next slot's mark is " +
                                std::to_string(seen) + ", not " + std::to_string(expected));
  return next + FifoGeometry::kMarkBytes;
}

void ShmRecvConnection::release() {
  header_->released.publish(++released_);
}

}  // namespace loom::shm

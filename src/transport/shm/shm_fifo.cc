#include "transport/shm/shm_fifo.h"

#include <unistd.h>

namespace loom::shm {

size_t FifoGeometry::bytes() const {
  size_t raw = kHeaderBytes + slotBytes * static_cast<size_t>(slots);
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
      posted_(header_->posted.value.load(std::memory_order_relaxed)) {}

void* ShmSendConnection::acquire(const WaitContext& ctx) {
  uint32_t released = header_->released.value.load(std::memory_order_acquire);
  // Unsigned differences stay right when the 32-bit counters wrap.
  while (posted_ - released >= static_cast<uint32_t>(geometry_.slots))
    released = waitForChange(header_->released, released, ctx, {peerRank_, peerPid_, peerStatus_, "to free a slot"});
  return slots_ + (posted_ % static_cast<uint32_t>(geometry_.slots)) * geometry_.slotBytes;
}

void ShmSendConnection::post() {
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

const void* ShmRecvConnection::acquire(const WaitContext& ctx) {
  uint32_t posted = header_->posted.value.load(std::memory_order_acquire);
  while (posted == released_)
    posted = waitForChange(header_->posted, posted, ctx, {peerRank_, peerPid_, peerStatus_, "to send data"});
  return slots_ + (released_ % static_cast<uint32_t>(geometry_.slots)) * geometry_.slotBytes;
}

void ShmRecvConnection::release() {
  header_->released.publish(++released_);
}

}  // namespace loom::shm

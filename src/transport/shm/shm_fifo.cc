#include "transport/shm/shm_fifo.h"

#include <unistd.h>

#include <string>

#include "base/error.h"
#include "transport/shm/peer_check.h"

namespace loom::shm {
namespace {

std::atomic<uint32_t>& markOf(const char* slot) {
  return *reinterpret_cast<std::atomic<uint32_t>*>(const_cast<char*>(slot));
}

std::string outOfStep(int peer, const std::string& detail) {
  return "the FIFO with rank " + std::to_string(peer) + " is out of step: " + detail;
}

}  // namespace

size_t FifoGeometry::bytes() const {
  size_t raw = kHeaderBytes + slotStride() * static_cast<size_t>(slots);
  size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (raw + page - 1) / page * page;
}

ShmSendConnection::ShmSendConnection(void* fifo, FifoGeometry geometry, FifoPeer peer)
    : header_(static_cast<FifoHeader*>(fifo)),
      slots_(static_cast<char*>(fifo) + FifoGeometry::kHeaderBytes),
      geometry_(geometry),
      peer_(peer),
      posted_(header_->posted.load(std::memory_order_relaxed)),
      releasedSeen_(header_->released.load(std::memory_order_relaxed)),
      next_(slot(posted_)) {}

char* ShmSendConnection::slot(uint32_t number) const {
  return slots_ + (number % static_cast<uint32_t>(geometry_.slots)) * geometry_.slotStride();
}

void* ShmSendConnection::tryAcquire() {
  // Unsigned differences stay right when the 32-bit counters wrap.
  const uint32_t slots = static_cast<uint32_t>(geometry_.slots);
  if (posted_ - releasedSeen_ >= slots) {
    releasedSeen_ = header_->released.load(std::memory_order_acquire);
    if (releasedSeen_ - posted_ <= slots && releasedSeen_ != posted_)
      fail(loomInternalError, outOfStep(peer_.rank, "that rank released " + std::to_string(releasedSeen_) +
                                                        " slots but only " + std::to_string(posted_) + " were posted"));
    if (posted_ - releasedSeen_ >= slots) return nullptr;
  }
  return next_ + FifoGeometry::kSlotHeaderBytes;
}

void ShmSendConnection::post(size_t /*bytes: the peer reads the slot in place*/) {
  markOf(next_).store(posted_ + 1, std::memory_order_release);
  header_->posted.store(++posted_, std::memory_order_release);
  next_ = slot(posted_);
  // Either the receiver's last look before it sleeps sees this post, or
  // this load sees it watching (a full fence on both sides).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (header_->postedWatched.load(std::memory_order_relaxed) != 0) peer_.status->doorbell.ring();
}

void ShmSendConnection::checkPeer(const WaitContext& ctx) {
  shm::checkPeer(ctx, {peer_.rank, peer_.pid, peer_.status}, *this);
}

ShmRecvConnection::ShmRecvConnection(void* fifo, FifoGeometry geometry, FifoPeer peer)
    : header_(static_cast<FifoHeader*>(fifo)),
      slots_(static_cast<const char*>(fifo) + FifoGeometry::kHeaderBytes),
      geometry_(geometry),
      peer_(peer),
      released_(header_->released.load(std::memory_order_relaxed)),
      next_(slot(released_)) {}

const char* ShmRecvConnection::slot(uint32_t number) const {
  return slots_ + (number % static_cast<uint32_t>(geometry_.slots)) * geometry_.slotStride();
}

const void* ShmRecvConnection::tryAcquire() {
  // Only the mark: polling `posted` too would pull the cache line the
  // sender is about to write, slowing the very post this side waits for.
  if (markOf(next_).load(std::memory_order_acquire) == released_ + 1) return next_ + FifoGeometry::kSlotHeaderBytes;
  return nullptr;
}

void ShmRecvConnection::release() {
  header_->released.store(++released_, std::memory_order_release);
  next_ = slot(released_);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (header_->releasedWatched.load(std::memory_order_relaxed) != 0) peer_.status->doorbell.ring();
}

void ShmRecvConnection::checkPeer(const WaitContext& ctx) {
  // The sender marks a slot before it counts it posted: once `posted` says
  // the slot was posted its mark must show, or the two sides disagree on the
  // stream's position and reading on would hand stale bytes to the algorithm.
  const uint32_t posted = header_->posted.load(std::memory_order_acquire);
  const uint32_t seen = markOf(slot(released_)).load(std::memory_order_acquire);
  if (static_cast<int32_t>(posted - released_) > 0 && seen != released_ + 1)
    fail(loomInternalError,
         ctx.describe() + ": " +
             outOfStep(peer_.rank, "its posted count is " + std::to_string(posted) + ", this side has released " +
                                       std::to_string(released_) + ", but the next slot's mark is " +
                                       std::to_string(seen) + ", not " + std::to_string(released_ + 1)));
  shm::checkPeer(ctx, {peer_.rank, peer_.pid, peer_.status}, *this);
}

}  // namespace loom::shm

#include "transport/mem/mem_fabric.h"

#include <chrono>
#include <string>

namespace loom::mem {

int64_t steadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void RankBoard::publishCall(const CollectiveCall& call) {
  std::lock_guard<std::mutex> lock(mutex_);
  call_ = call;
}

std::optional<CollectiveCall> RankBoard::readCall() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return call_;
}

void RankBoard::publishFailure(const std::string& sentence) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed.load(std::memory_order_relaxed)) return;
  failure_ = sentence;
  failed.store(true, std::memory_order_release);
}

std::string RankBoard::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

Fabric::Fabric(int nranks, SlotShape shape, Faults faults, std::unique_ptr<Timeline> timeline)
    : nranks_(nranks), shape_(shape), faults_(faults), boards_(new RankBoard[nranks]), timeline_(std::move(timeline)) {
  if (delays()) clock_ = std::thread([this] { clockLoop(); });
}

Fabric::~Fabric() {
  if (!clock_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(clockMutex_);
    stopping_ = true;
  }
  clockChanged_.notify_one();
  clock_.join();
}

MemFifo& Fabric::fifo(int from, int to, Channel channel) {
  const size_t index = (static_cast<size_t>(channel) * nranks_ + from) * nranks_ + to;
  std::lock_guard<std::mutex> lock(fifosMutex_);
  std::unique_ptr<MemFifo>& fifo = fifos_[index];
  if (fifo == nullptr) {
    fifo = std::make_unique<MemFifo>();
    fifo->slots.reset(new MemSlot[shape_.slots]);
    fifo->random.seed(faults_.seed * 1000003 + index);
  }
  return *fifo;
}

std::unique_ptr<char[]> Fabric::takeBuffer() {
  {
    std::lock_guard<std::mutex> lock(buffersMutex_);
    if (!spareBuffers_.empty()) {
      std::unique_ptr<char[]> buffer = std::move(spareBuffers_.back());
      spareBuffers_.pop_back();
      return buffer;
    }
    if (bufferLimit_ != 0 && buffersMade_ >= bufferLimit_)
      throw BufferLimitReached(loomSystemError, "more than " + std::to_string(bufferLimit_) +
                                                    " messages would be in flight at once, " + bufferLimitWhat_);
    ++buffersMade_;
  }
  return std::unique_ptr<char[]>(new char[shape_.bytes]);
}

void Fabric::giveBack(std::unique_ptr<char[]> buffer) {
  std::lock_guard<std::mutex> lock(buffersMutex_);
  spareBuffers_.push_back(std::move(buffer));
}

int64_t Fabric::deliveryTime(MemFifo& fifo, int receiver) {
  if (!delays()) return 0;
  const int64_t delay = std::uniform_int_distribution<int64_t>(0, faults_.maxDelayMicros)(fifo.random) * 1000;
  // A connection's messages keep their order: none is visible before the
  // one posted ahead of it.
  const int64_t at = std::max(fifo.lastVisibleNs, steadyNanos() + delay);
  fifo.lastVisibleNs = at;
  {
    std::lock_guard<std::mutex> lock(clockMutex_);
    dues_.push({at, receiver});
  }
  clockChanged_.notify_one();
  return at;
}

void Fabric::clockLoop() {
  std::unique_lock<std::mutex> lock(clockMutex_);
  while (!stopping_) {
    if (dues_.empty()) {
      clockChanged_.wait(lock);
      continue;
    }
    const Due next = dues_.top();
    const int64_t now = steadyNanos();
    if (next.first > now) {
      clockChanged_.wait_for(lock, std::chrono::nanoseconds(next.first - now));
      continue;
    }
    dues_.pop();
    lock.unlock();
    boards_[next.second].doorbell.ring();
    lock.lock();
  }
}

void Fabric::fail(int rank, const std::string& sentence) {
  boards_[rank].publishFailure(sentence);
  for (int peer = 0; peer < nranks_; ++peer) boards_[peer].doorbell.ring();
}

void Fabric::leave(int rank) {
  boards_[rank].left.store(true, std::memory_order_release);
  for (int peer = 0; peer < nranks_; ++peer) boards_[peer].doorbell.ring();
}

}  // namespace loom::mem

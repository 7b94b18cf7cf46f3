#include "transport/tcp/tcp_rings.h"

#include <cstdlib>
#include <cstring>

#include "base/error.h"

namespace loom::tcp {

SlotMemory::SlotMemory(RingGeometry geometry) : geometry_(geometry) {
  bytes_ = (geometry.stride() * static_cast<size_t>(geometry.slots) + 4095) / 4096 * 4096;
  base_ = static_cast<char*>(std::aligned_alloc(4096, bytes_));
  if (base_ == nullptr) fail(loomSystemError, "could not allocate " + std::to_string(bytes_) + " bytes of TCP slots");
  std::memset(base_, 0, bytes_);
}

SlotMemory::~SlotMemory() {
  std::free(base_);
}

std::string PeerState::brokenBecause() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return brokenBecause_;
}

void PeerState::breakWith(const std::string& sentence) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (broken_.load(std::memory_order_relaxed)) return;  // the first reason is the root cause
  brokenBecause_ = sentence;
  broken_.store(true, std::memory_order_release);
}

PeerState::Heard PeerState::heard() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return heard_;
}

void PeerState::heardFailure(const std::string& sentence) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (heard_.failed) return;
  heard_.failed = true;
  heard_.failure = sentence;
}

void PeerState::heardHeartbeat(int64_t nowMs, int waitingFor, uint64_t collectivesStarted, const CollectiveCall& call) {
  std::lock_guard<std::mutex> lock(mutex_);
  heard_.beating = true;
  heard_.heardMs = nowMs;
  heard_.waitingFor = waitingFor;
  heard_.collectivesStarted = collectivesStarted;
  heard_.haveCall = collectivesStarted > 0;
  heard_.call = call;
}

}  // namespace loom::tcp

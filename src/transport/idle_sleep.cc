#include "transport/idle_sleep.h"

#include <algorithm>

#include "transport/transport.h"

namespace loom {

IdleSleep::IdleSleep(Doorbell& doorbell, std::vector<Transport*> lenders)
    : doorbell_(doorbell), lenders_(std::move(lenders)) {
  if (!lenders_.empty()) wakeup_ = std::make_unique<Wakeup>();
}

// Waits on descriptors and on anything else at once (a shared-memory peer,
// a full send ring): the doorbell, with the descriptors handed back. No
// wait on a descriptor: the doorbell, and the descriptors stay claimed
// (what arrives there waits in the kernel until a receive looks), so that a
// rank whose calls alternate steps within a host and steps across does not
// wake a transport's thread at every step.
void IdleSleep::sleep(uint32_t armed, int64_t ms, const std::vector<Waitable*>& waits) {
  if (wakeup_) {
    pollFds_.clear();
    pollOn_.clear();
    for (Waitable* waitable : waits) {
      const int fd = waitable->pollFd();
      if (fd < 0) continue;
      pollFds_.push_back({fd, POLLIN, 0});
      pollOn_.push_back(waitable);
    }
    if (!pollOn_.empty() && pollOn_.size() == waits.size()) {
      sleepInPoll(armed, ms);
      return;
    }
    if (!pollOn_.empty()) returnDescriptors();
  }
  doorbell_.sleep(armed, ms);
}

// Every ringer rings the doorbell, then the wake-up (ring()); this arms the
// wake-up and sleeps only if the doorbell has not been rung since it was
// armed: either it sees the ring, or the ringer sees the wake-up armed.
// Fences on both sides, as doorbell.h says.
void IdleSleep::sleepInPoll(uint32_t armed, int64_t ms) {
  wakeup_->arm();
  if (doorbell_.rings.load(std::memory_order_relaxed) != armed) {
    wakeup_->disarm();
    wakeup_->drain();
    doorbell_.disarm();
    return;
  }
  pollFds_.push_back({wakeup_->fd(), POLLIN, 0});
  const int ready = ::poll(pollFds_.data(), pollFds_.size(), static_cast<int>(std::max<int64_t>(ms, 0)));
  wakeup_->disarm();
  wakeup_->drain();
  doorbell_.disarm();
  if (ready > 0)
    for (size_t i = 0; i < pollOn_.size(); ++i)
      if (pollFds_[i].revents != 0) pollOn_[i]->pollReady();
}

void IdleSleep::returnDescriptors() {
  for (Transport* lender : lenders_) lender->takeBackDescriptors();
}

}  // namespace loom

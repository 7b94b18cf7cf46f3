#include "base/wakeup.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>

#include "base/error.h"

namespace loom {

Wakeup::Wakeup() : fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (fd_ < 0) failSystem("eventfd (a wake-up for a thread asleep in poll)", errno);
}

Wakeup::~Wakeup() {
  close(fd_);
}

void Wakeup::wake() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_relaxed) == 0) return;
  const uint64_t one = 1;
  // A full counter (EAGAIN) is already a wake-up.
  [[maybe_unused]] ssize_t n = write(fd_, &one, sizeof(one));
}

void Wakeup::arm() {
  sleeping_.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

void Wakeup::drain() {
  uint64_t count = 0;
  [[maybe_unused]] ssize_t n = read(fd_, &count, sizeof(count));
}

}  // namespace loom

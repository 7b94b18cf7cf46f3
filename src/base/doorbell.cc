#include "base/doorbell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace loom {

void Doorbell::ring() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (sleeping.load(std::memory_order_relaxed) == 0) return;
  rings.fetch_add(1, std::memory_order_relaxed);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&rings), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

uint32_t Doorbell::arm() {
  sleeping.store(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  return rings.load(std::memory_order_relaxed);
}

void Doorbell::sleep(uint32_t armed, int64_t ms) {
  if (ms < 0) ms = 0;
  timespec timeout{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1000000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&rings), FUTEX_WAIT, armed, &timeout, nullptr, 0);
  disarm();
}

}  // namespace loom

// Where a progress loop sleeps when none of its operations can move, and
// what wakes it. Whoever makes an operation able to move rings the
// doorbell: a peer that posted or freed a slot, a thread that posted an
// operation or wants to drive, an abort. It may live in memory that other
// processes map (the shm status page), so rings cross processes: the futex
// is a shared one.
//
// The sleeper arms, looks at everything it waits for once more, then sleeps
// on the value arm() returned; the ringer publishes what it changed, then
// rings. With a full fence on both sides between the write and the read,
// either the sleeper's last look sees the change or the ringer sees the
// sleeper armed: no wake-up is lost.
#pragma once

#include <atomic>
#include <cstdint>

namespace loom {

// A polling loop's pause: lets the sibling hyperthread run, saves power.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

struct alignas(64) Doorbell {
  std::atomic<uint32_t> rings{0};
  std::atomic<uint32_t> sleeping{0};

  // After publishing a change the sleeper may be waiting for.
  void ring();
  // The sleeper's side: arm, look once more, then sleep (or disarm).
  uint32_t arm();
  // Returns after a ring since arm(), after `ms`, or spuriously; disarms.
  void sleep(uint32_t armed, int64_t ms);
  void disarm() { sleeping.store(0, std::memory_order_relaxed); }
};
static_assert(sizeof(Doorbell) == 64);

}  // namespace loom

// A 32-bit counter one side bumps and the other side waits on: spin briefly,
// then sleep on a futex, so eight ranks on two cores do not burn the CPU the
// rank they wait for needs. Works across processes (shared futex).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "transport/shm/shm_status.h"
#include "transport/wait_context.h"

namespace loom::shm {

// A polling loop's pause: lets the sibling hyperthread run, saves power.
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Lives in shared memory, on a cache line of its own.
struct alignas(64) FutexCounter {
  std::atomic<uint32_t> value;
  std::atomic<uint32_t> sleeping;  // the waiter is (about to be) asleep on value

  // Publishes a new value and wakes the waiter if it sleeps.
  void publish(uint32_t newValue);
};
static_assert(sizeof(FutexCounter) == 64);

// Who the waiter is waiting for, for liveness checks and error sentences.
struct WaitTarget {
  int peerRank;
  pid_t peerPid;
  const StatusPage* peerStatus;  // its announcements
  const char* waitingFor;        // "to send data", "to free a slot"
};

// Waits until counter.value != seen and returns the new value. Throws
// loomTimeout after ctx.timeoutMs without a change, loomAborted when the
// communicator is aborted, loomRemoteError when the peer process is gone or announced a failure.
uint32_t waitForChange(FutexCounter& counter, uint32_t seen, const WaitContext& ctx, const WaitTarget& target);

}  // namespace loom::shm

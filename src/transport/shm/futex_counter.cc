#include "transport/shm/futex_counter.h"

#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

#include "core/deadline.h"
#include "core/error.h"

namespace loom::shm {
namespace {

// Bounds one sleep so aborts, deadlines and dead peers are noticed promptly.
constexpr int64_t kSleepSliceMs = 50;

void futexWait(std::atomic<uint32_t>* address, uint32_t expected, int64_t ms) {
  timespec timeout{static_cast<time_t>(ms / 1000), static_cast<long>((ms % 1000) * 1000000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(address), FUTEX_WAIT, expected, &timeout, nullptr, 0);
}

void futexWakeAll(std::atomic<uint32_t>* address) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(address), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

bool processGone(pid_t pid) {
  return pid > 0 && pid != getpid() && kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

void FutexCounter::publish(uint32_t newValue) {
  // seq_cst on both sides: either the waiter sees the new value before it
  // sleeps, or this load sees its `sleeping` flag (no lost wake-ups).
  value.store(newValue, std::memory_order_seq_cst);
  if (sleeping.load(std::memory_order_seq_cst) != 0) futexWakeAll(&value);
}

uint32_t waitForChange(FutexCounter& counter, uint32_t seen, const WaitContext& ctx, const WaitTarget& target) {
  for (int i = 0; i < ctx.spinIterations; ++i) {
    uint32_t now = counter.value.load(std::memory_order_acquire);
    if (now != seen) return now;
    cpuRelax();
  }
  // Yielding hands the core to the rank we wait for when ranks outnumber
  // cores, and costs the poster nothing: it only pays for a futex wake when
  // the waiter really sleeps.
  if (ctx.yieldMicros > 0) {
    const auto yieldUntil = Deadline::Clock::now() + std::chrono::microseconds(ctx.yieldMicros);
    do {
      sched_yield();
      uint32_t now = counter.value.load(std::memory_order_acquire);
      if (now != seen) return now;
    } while (Deadline::Clock::now() < yieldUntil);
  }
  Deadline deadline = Deadline::afterMs(ctx.timeoutMs);
  for (;;) {
    counter.sleeping.store(1, std::memory_order_seq_cst);
    uint32_t now = counter.value.load(std::memory_order_seq_cst);
    if (now == seen) {
      futexWait(&counter.value, seen, deadline.remainingMs(kSleepSliceMs) + 1);
      now = counter.value.load(std::memory_order_acquire);
    }
    counter.sleeping.store(0, std::memory_order_relaxed);
    if (now != seen) return now;
    if (ctx.aborted != nullptr && ctx.aborted->load(std::memory_order_relaxed))
      fail(loomAborted, ctx.describe() + " was aborted (loomCommAbort) while waiting for rank " +
                            std::to_string(target.peerRank) + " " + target.waitingFor);
    if (target.peerStatus != nullptr &&
        target.peerStatus->failed.load(std::memory_order_acquire) == StatusPage::kFailed)
      fail(loomRemoteError, ctx.describe() + " failed because rank " + std::to_string(target.peerRank) +
                                " failed: " + target.peerStatus->failure);
    if (ctx.call != nullptr && target.peerStatus != nullptr) {
      // Checked only once asleep, so the fast path pays nothing for it. A
      // peer that ran this collective with other arguments, or already
      // finished it, will never send what this rank waits for.
      const CollectiveCall theirs = target.peerStatus->readCall();
      if (theirs.number == ctx.call->number && !theirs.sameCallAs(*ctx.call))
        fail(loomInvalidUsage, ctx.describeMismatch(target.peerRank, theirs));
      // A peer posts before it announces its next collective, so once that
      // announcement is visible so is the post: look again before blaming it.
      if (theirs.number > ctx.call->number) {
        now = counter.value.load(std::memory_order_acquire);
        if (now != seen) return now;
      }
      if (theirs.number > ctx.call->number)
        fail(loomInvalidUsage, ctx.describe() + " cannot finish: rank " + std::to_string(target.peerRank) +
                                   " already finished collective #" + std::to_string(ctx.call->number) +
                                   " and started " + theirs.describe() + " while this rank (" + ctx.call->describe() +
                                   ") still waits for it " + target.waitingFor +
                                   ": the ranks passed different arguments to collective #" +
                                   std::to_string(ctx.call->number));
    }
    if (processGone(target.peerPid))
      fail(loomRemoteError, ctx.describe() + " failed: rank " + std::to_string(target.peerRank) + " (pid " +
                                std::to_string(target.peerPid) + ") exited while this rank was waiting for it " +
                                target.waitingFor);
    if (deadline.expired())
      fail(loomTimeout, ctx.describe() + " timed out after " + std::to_string(ctx.timeoutMs) + " ms waiting for rank " +
                            std::to_string(target.peerRank) + " " + target.waitingFor +
                            " (is that rank stalled, or did it call a different collective?)");
  }
}

}  // namespace loom::shm

// What a rank waiting on a shared-memory peer can learn about it without
// its help: whether it announced a failure, runs another collective than
// this rank, or exited. The engine asks once a wait has lasted (it was
// about to sleep), so the fast path pays nothing for these checks.
#pragma once

#include <sys/types.h>

#include "transport/connection.h"
#include "transport/shm/shm_status.h"
#include "transport/wait_context.h"

namespace loom::shm {

// Who the waiter is waiting for, for liveness checks and error sentences.
struct WaitTarget {
  int peerRank;
  pid_t peerPid;
  const StatusPage* peerStatus;  // its announcements
};

// Throws, naming the peer: loomRemoteError when it failed or exited,
// loomInvalidUsage when it called another collective or already finished
// this one. `connection` is looked at again before blaming a peer that has
// moved on, since it may have moved on after posting what this rank needs.
void checkPeer(const WaitContext& ctx, const WaitTarget& target, Waitable& connection);

// Whether the process has ended. Through a pidfd, which is readable once the
// process has exited, so a dead peer that nobody has reaped yet (a zombie,
// which kill(pid, 0) still finds) counts as gone; kill(pid, 0) where pidfds
// are missing (Linux before 5.3). Never true for this process.
bool processExited(pid_t pid);

}  // namespace loom::shm

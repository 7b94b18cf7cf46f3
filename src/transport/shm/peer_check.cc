#include "transport/shm/peer_check.h"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "base/error.h"
#include "transport/peer_call.h"

namespace loom::shm {

bool processExited(pid_t pid) {
  if (pid <= 0 || pid == getpid()) return false;
  const int fd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) {
    if (errno == ESRCH) return true;
    // No pidfds here (ENOSYS), or no descriptor to spare: kill() still
    // tells a process that is gone from one that is not (zombies aside).
    return kill(pid, 0) != 0 && errno == ESRCH;
  }
  pollfd exited{fd, POLLIN, 0};
  const bool gone = poll(&exited, 1, 0) == 1;
  close(fd);
  return gone;
}

void checkPeer(const WaitContext& ctx, const WaitTarget& target, Waitable& connection) {
  if (target.peerStatus != nullptr && target.peerStatus->failed.load(std::memory_order_acquire) == StatusPage::kFailed)
    fail(loomRemoteError, ctx.describe() + " failed because rank " + std::to_string(target.peerRank) +
                              " failed: " + target.peerStatus->failure);
  if (ctx.call != nullptr && target.peerStatus != nullptr) {
    // A torn read (a peer mid-write, or killed there) is judged next time.
    if (const std::optional<CollectiveCall> theirs = target.peerStatus->readCall())
      checkPeerCall(ctx, target.peerRank, *theirs, connection);
  }
  if (processExited(target.peerPid))
    fail(loomRemoteError, ctx.describe() + " failed: rank " + std::to_string(target.peerRank) + " (pid " +
                              std::to_string(target.peerPid) + ") exited while this rank was waiting for it " +
                              connection.peerMustDo());
}

}  // namespace loom::shm

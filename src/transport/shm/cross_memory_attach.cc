#include "transport/shm/cross_memory_attach.h"

#include <sys/prctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "transport/shm/peer_check.h"

namespace loom::shm {
namespace {

// One call moves at most this much, so an abort is seen between calls
// rather than after a copy of hundreds of megabytes.
constexpr size_t kMaxBytesPerCall = 16u << 20;

std::string hexAddress(const void* address) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", address);
  return text;
}

}  // namespace

void enableCrossMemoryAttach() {
#ifdef PR_SET_PTRACER
  prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);  // EINVAL without Yama: nothing to allow
#endif
}

std::string probeCrossMemoryAttach(pid_t pid, const void* remote, const void* expected, size_t bytes) {
  std::vector<char> seen(bytes);
  iovec local{seen.data(), bytes};
  iovec theirs{const_cast<void*>(remote), bytes};
  ssize_t got = process_vm_readv(pid, &local, 1, &theirs, 1, 0);
  if (got < 0) {
    int err = errno;
    std::string why = std::string("process_vm_readv: ") + std::strerror(err);
    if (err == EPERM)
      why += " (ptrace is restricted: see kernel.yama.ptrace_scope, or the container's seccomp profile)";
    if (err == ENOSYS) why += " (the kernel or a seccomp filter does not offer it)";
    return why;
  }
  if (static_cast<size_t>(got) != bytes || std::memcmp(seen.data(), expected, bytes) != 0)
    return "process_vm_readv returned other bytes than the shared memory holds";
  return std::string();
}

CrossMemoryAttach::CrossMemoryAttach(std::vector<pid_t> pids) : pids_(std::move(pids)), self_(getpid()) {}

const void* CrossMemoryAttach::inPlace(int peer, const void* remote) const {
  return pids_[peer] == self_ ? remote : nullptr;
}

void CrossMemoryAttach::postRead(int peer, const void* remote, void* local, size_t bytes, const WaitContext& ctx) {
  transfer(peer, const_cast<void*>(remote), local, bytes, false, ctx);
}

void CrossMemoryAttach::postWrite(int peer, void* remote, const void* local, size_t bytes, const WaitContext& ctx) {
  transfer(peer, remote, const_cast<void*>(local), bytes, true, ctx);
}

void CrossMemoryAttach::transfer(int peer, void* remote, void* local, size_t bytes, bool write,
                                 const WaitContext& ctx) const {
  const char* verb = write ? "writing" : "reading";
  if (pids_[peer] == self_) {
    if (bytes > 0 && local != remote) std::memcpy(write ? remote : local, write ? local : remote, bytes);
    return;
  }
  size_t done = 0;
  while (done < bytes) {
    if (ctx.aborted != nullptr && ctx.aborted->load(std::memory_order_relaxed))
      fail(loomAborted, ctx.describe() + " was aborted (loomCommAbort) while " + verb + " rank " +
                            std::to_string(peer) + "'s buffer");
    const size_t want = std::min(bytes - done, kMaxBytesPerCall);
    iovec mine{static_cast<char*>(local) + done, want};
    iovec theirs{static_cast<char*>(remote) + done, want};
    ssize_t got = write ? process_vm_writev(pids_[peer], &mine, 1, &theirs, 1, 0)
                        : process_vm_readv(pids_[peer], &mine, 1, &theirs, 1, 0);
    if (got > 0) {
      done += static_cast<size_t>(got);
      continue;
    }
    int err = got < 0 ? errno : EFAULT;
    if (err == EINTR) continue;
    std::string where = "rank " + std::to_string(peer) + " (pid " + std::to_string(pids_[peer]) + ")";
    // A peer killed mid-copy may still be a zombie, whose memory is gone:
    // that reads as EFAULT, not ESRCH, and must not blame the buffers.
    if (err == ESRCH || processExited(pids_[peer]))
      fail(loomRemoteError, ctx.describe() + " failed: " + where + " exited while this rank " +
                                (write ? "wrote" : "read") + " its buffer");
    if (err == EFAULT)
      fail(loomInvalidUsage, ctx.describe() + " failed: copying " + std::to_string(bytes - done) + " bytes " +
                                 (write ? "to " : "from ") + hexAddress(static_cast<const char*>(remote) + done) +
                                 " in " + where +
                                 " hit unmapped memory: that rank's buffer, or this rank's, is smaller than the "
                                 "collective's count says");
    failSystem(ctx.describe() + ": " + verb + " the buffer of " + where + " with " +
                   (write ? "process_vm_writev" : "process_vm_readv"),
               err);
  }
}

}  // namespace loom::shm

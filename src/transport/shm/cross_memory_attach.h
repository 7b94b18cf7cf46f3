// PeerMemory over Linux cross-memory attach (process_vm_readv and
// process_vm_writev): the kernel copies between the peer's pages and ours,
// with no staging buffer. It needs
// ptrace permission over the peer (same user; with Yama ptrace_scope 1 the
// peer must allow it, which enableCrossMemoryAttach() does; scope 2 and 3,
// and seccomp profiles that block the call, make probe() fail).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "transport/peer_memory.h"

namespace loom::shm {

// Lets processes of the same user read this one's memory under Yama
// ptrace_scope 1 (the Ubuntu default). A no-op where Yama is absent.
void enableCrossMemoryAttach();

// Reads `bytes` at `remote` in `pid` and compares them with `expected`.
// Returns an empty string on success, else why it failed.
std::string probeCrossMemoryAttach(pid_t pid, const void* remote, const void* expected, size_t bytes);

// The kernel copies as the transfer is posted: completions are ready at once.
class CrossMemoryAttach final : public PeerMemory {
 public:
  explicit CrossMemoryAttach(std::vector<pid_t> pids);
  const void* inPlace(int peer, const void* remote) const override;
  void postRead(int peer, const void* remote, void* local, size_t bytes, const WaitContext& ctx) override;
  void postWrite(int peer, void* remote, const void* local, size_t bytes, const WaitContext& ctx) override;
  Waitable& completions() override { return done_; }

 private:
  // process_vm_readv (write false) or process_vm_writev, in bounded calls.
  void transfer(int peer, void* remote, void* local, size_t bytes, bool write, const WaitContext& ctx) const;

  std::vector<pid_t> pids_;
  pid_t self_;
  DoneWhenPosted done_;
};

}  // namespace loom::shm

// Single-copy access to peers' buffers. The FIFOs (connection.h) stage every
// byte through a slot: a copy in and a copy out. For large messages a rank
// can instead copy straight between its buffer and a peer's, given the
// peer's address: one copy, as Open MPI's vader does with Linux cross-memory
// attach, or an RDMA READ/WRITE. Addresses travel in FIFO slots; the
// algorithms in collectives/direct.cc decide when it is safe to copy
// (collective barriers).
//
// Transfers are posted, then awaited: an RDMA READ/WRITE or a device copy
// completes on its own time, reported on a completion queue. Kinds whose
// transfers the CPU does (cross-memory attach) complete them before post
// returns, and their completions are ready at once.
#pragma once

#include <coroutine>
#include <cstddef>

#include "transport/connection.h"
#include "transport/wait_context.h"

namespace loom {

class PeerMemory {
 public:
  virtual ~PeerMemory() = default;
  // Non-null when `peer` shares this process's address space (ranks as
  // threads): `remote` can then be read in place, with no copy at all.
  virtual const void* inPlace(int peer, const void* remote) const = 0;
  // Posts a copy of `bytes` from address `remote` of `peer` into `local`
  // (postRead), or from `local` to `remote` (postWrite). Neither buffer may
  // be touched until the transfers are done (TransfersDone). Throws, naming
  // the peer: loomRemoteError if it exited, loomInvalidUsage if the range
  // is not mapped (a buffer shorter than the count), loomAborted.
  virtual void postRead(int peer, const void* remote, void* local, size_t bytes, const WaitContext& ctx) = 0;
  virtual void postWrite(int peer, void* remote, const void* local, size_t bytes, const WaitContext& ctx) = 0;
  // What a schedule parks on until every transfer it posted is done: ready()
  // then; checkPeer() throws, naming the peer, for a transfer that failed.
  virtual Waitable& completions() = 0;
};

// The completions of a kind whose transfers are done when posted.
class DoneWhenPosted final : public Waitable {
 public:
  int peer() const override { return -1; }
  size_t slotBytes() const override { return 0; }
  bool ready() override { return true; }
  void checkPeer(const WaitContext& /*ctx*/) override {}
  const char* peerMustDo() const override { return "to let a transfer complete"; }
  void watch(bool /*on*/) override {}
};

// `co_await TransfersDone{memory.completions(), wait}`: resumes once every
// transfer this schedule posted there is done (at once for the CPU kinds).
// Registered regions' transfers complete the same way (regions.h).
struct TransfersDone {
  Waitable& completions;
  const WaitContext& wait;

  bool await_ready() { return completions.ready(); }
  void await_suspend(std::coroutine_handle<> self) { wait.park(self, completions); }
  void await_resume() {
    if (!completions.ready()) wait.failResumedTooEarly(completions.peer());
  }
};

}  // namespace loom

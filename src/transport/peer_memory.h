// Single-copy access to peers' buffers. The FIFOs (connection.h) stage every
// byte through shared memory: a copy in and a copy out. For large messages a
// rank can instead read a peer's buffer straight into its own, given the
// peer's address: one copy, as Open MPI's vader does with Linux cross-memory
// attach. Addresses travel in FIFO slots; the algorithms in
// collectives/direct.cc decide when it is safe to read (collective barriers).
#pragma once

#include <cstddef>

#include "transport/wait_context.h"

namespace loom {

class PeerMemory {
 public:
  virtual ~PeerMemory() = default;
  // Non-null when `peer` shares this process's address space (ranks as
  // threads): `remote` can then be read in place, with no copy at all.
  virtual const void* inPlace(int peer, const void* remote) const = 0;
  // Copies `bytes` from address `remote` of `peer` into `local`. Throws,
  // naming the peer: loomRemoteError if it exited, loomInvalidUsage if the
  // range is not mapped (a buffer shorter than the count), loomAborted.
  virtual void read(int peer, const void* remote, void* local, size_t bytes, const WaitContext& ctx) const = 0;
};

}  // namespace loom

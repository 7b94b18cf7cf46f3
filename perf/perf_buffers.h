// The perf harness's send and receive regions. As nccl-tests, each is
// allocated (and, with -R, registered) once for the whole sweep, and each
// timed iteration works at an offset that steps through the region, so the
// figures are not cache-hot; here the region is also at least twice the
// last-level cache (nccl-tests rotates over its -e bytes only, which on a
// GPU's small L2 is enough).
#pragma once

#include <loom/loom.h>

#include <cstddef>

namespace loom::perf {

// Bytes of one instance of the last-level cache (sysfs, then sysconf; at
// most 64 MiB; 32 MiB if unknown).
size_t lastLevelCacheBytes();

class PerfBuffers {
 public:
  // `bytes` per region (send and receive); `registerWith` non-null: from
  // loomMemAlloc and registered whole with that communicator (collective).
  // Exits with a sentence on failure.
  PerfBuffers(size_t bytes, loomComm_t registerWith, int rank);
  ~PerfBuffers();
  PerfBuffers(const PerfBuffers&) = delete;
  PerfBuffers& operator=(const PerfBuffers&) = delete;

  unsigned char* send() const { return send_; }
  unsigned char* recv() const { return recv_; }
  size_t bytes() const { return bytes_; }

  // nccl-tests' rotation: iteration `iter` of an operation spanning
  // `span` bytes starts at span * (iter % (usable / span)); 0 when hot.
  size_t offset(size_t span, size_t usable, long iter) const;

 private:
  unsigned char* allocate(void** handle);
  void release(unsigned char* data, void* handle);

  size_t bytes_;
  loomComm_t comm_;
  int rank_;
  unsigned char *send_ = nullptr, *recv_ = nullptr;
  void *sendHandle_ = nullptr, *recvHandle_ = nullptr;
};

}  // namespace loom::perf

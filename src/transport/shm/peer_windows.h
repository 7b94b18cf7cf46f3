// Shared memory's registration keys (transport/regions.h): a buffer from
// loomMemAlloc lives in a memfd, which a peer on the same host maps through
// /proc/<pid>/fd/<fd>, so it reads and writes the owner's pages directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/regions.h"

namespace loom::shm {

// Shared memory's key for one buffer (it fits in kRegionKeyBytes).
struct WindowOffer {
  uint64_t window;        // the registration's number, the same on every rank
  uint64_t processToken;  // equal tokens: the same process (ranks as threads)
  int32_t pid;
  int32_t fd;           // open in `pid`: a peer maps /proc/<pid>/fd/<fd>
  uint64_t device;      // st_dev and st_ino of that file, to be sure the
  uint64_t inode;       //   peer opened this file and not a namesake
  uint64_t fileOffset;  // of the buffer in the file
  uint64_t base;        // the buffer's address in `pid`
  uint64_t bytes;
};

// This process's offer for [base, base + bytes). Throws loomInvalidArgument
// naming `api` if the range is not inside memory from loomMemAlloc.
WindowOffer offerWindow(const char* api, uint64_t window, const void* base, size_t bytes);

// One rank's buffer as seen from this process. The owner's own window pins
// the buffer against loomMemFree while it lives.
class MappedWindow final : public PeerRegion {
 public:
  // Maps the offer's pages here (or uses them as they are, in the offering
  // process). Null, with the reason in *why, if the pages cannot be reached.
  // `own`: the offer is this rank's, and the window pins its pages.
  static std::unique_ptr<MappedWindow> open(const WindowOffer& offer, bool own, std::string* why);
  ~MappedWindow();
  MappedWindow(const MappedWindow&) = delete;
  MappedWindow& operator=(const MappedWindow&) = delete;

  // Where [remote, remote + bytes) of the owner is here, or null if the
  // range is not all inside this window.
  bool contains(uint64_t remote, size_t bytes) const override;
  char* translate(uint64_t remote, size_t bytes) const override;

 private:
  MappedWindow() = default;
  uint64_t remoteBase_ = 0;
  uint64_t bytes_ = 0;
  char* local_ = nullptr;
  void* mapping_ = nullptr;  // null when local_ is the owner's own memory
  size_t mappingBytes_ = 0;
  bool pinned_ = false;  // this rank's own buffer: pinned against loomMemFree
};

// The registry's entries (transport/registry.h): this process's key for
// [base, base + bytes), throwing loomInvalidArgument naming `api` unless the
// range lies in one loomMemAlloc allocation; and a peer's buffer from its key.
void makeRegionKey(const char* api, uint64_t window, const void* base, size_t bytes,
                   unsigned char key[kRegionKeyBytes]);
std::unique_ptr<PeerRegion> openRegion(const unsigned char key[kRegionKeyBytes], bool own, std::string* why);

}  // namespace loom::shm

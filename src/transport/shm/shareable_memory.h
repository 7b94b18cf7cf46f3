// Host memory that other processes can map: what loomMemAlloc hands out.
// Each allocation is a memfd mapped MAP_SHARED, so a peer on the same host
// maps the same pages (through /proc/<pid>/fd/<fd>, peer_windows.h) and
// reads or writes them with plain loads and stores: single-copy collectives
// without the kernel's page-by-page copy (cross_memory_attach.h).
//
// The registry below remembers every live allocation so that registering a
// buffer can find the file behind it, and so that loomMemFree can refuse to
// free memory a communicator still shares with peers (they would keep
// writing to pages this process no longer owns).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>

namespace loom::shm {

// The file behind the allocation that holds a buffer, and where in it.
struct SharedRange {
  int fd;                // open in this process as long as the allocation lives
  uint64_t device;       // st_dev and st_ino of the file: a peer that opens
  uint64_t inode;        //   /proc/<pid>/fd/<fd> checks it reached this file
  uint64_t fileOffset;   // of the buffer's first byte
};

// Throws loom::Error (loomInvalidArgument for size 0, loomSystemError when
// the kernel refuses).
void* allocateShareable(size_t bytes);
// Throws loomInvalidArgument if `pointer` is not an allocation's start, and
// loomInvalidUsage while a communicator still has it registered.
void freeShareable(void* pointer);

// The allocation holding all of [pointer, pointer + bytes), if any.
std::optional<SharedRange> findShareable(const void* pointer, size_t bytes);

// Registrations pin their allocation: freeShareable fails until each is
// released. `pointer` must lie in a live allocation.
void pinShareable(const void* pointer);
void unpinShareable(const void* pointer);

}  // namespace loom::shm

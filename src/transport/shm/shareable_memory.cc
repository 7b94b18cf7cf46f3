#include "transport/shm/shareable_memory.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <mutex>
#include <string>

#include "base/error.h"

namespace loom::shm {
namespace {

struct Allocation {
  size_t bytes;  // as mapped: rounded up to whole pages
  int fd;
  uint64_t device;
  uint64_t inode;
  int pins = 0;
};

std::mutex registryMutex;
// Keyed by start address; never destroyed, so allocations freed during
// process exit (static destructors) still find it.
std::map<uintptr_t, Allocation>& registry() {
  static auto* live = new std::map<uintptr_t, Allocation>();
  return *live;
}

// The live allocation holding `address`, or end(). Caller holds the mutex.
std::map<uintptr_t, Allocation>::iterator holding(uintptr_t address) {
  auto& live = registry();
  auto it = live.upper_bound(address);
  if (it == live.begin()) return live.end();
  --it;
  return address < it->first + it->second.bytes ? it : live.end();
}

std::string hex(const void* pointer) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", pointer);
  return text;
}

}  // namespace

void* allocateShareable(size_t bytes) {
  if (bytes == 0) fail(loomInvalidArgument, "loomMemAlloc: size is 0");
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (bytes > SIZE_MAX - page) fail(loomInvalidArgument, "loomMemAlloc: size " + std::to_string(bytes) + " is too large");
  const size_t rounded = (bytes + page - 1) / page * page;
  int fd = memfd_create("loom-shared-buffer", MFD_CLOEXEC);
  if (fd < 0) failSystem("loomMemAlloc: memfd_create", errno);
  struct stat status {};
  if (ftruncate(fd, static_cast<off_t>(rounded)) != 0 || fstat(fd, &status) != 0) {
    int err = errno;
    close(fd);
    failSystem("loomMemAlloc: sizing a shared file of " + std::to_string(rounded) + " bytes", err);
  }
  void* pointer = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (pointer == MAP_FAILED) {
    int err = errno;
    close(fd);
    failSystem("loomMemAlloc: mapping " + std::to_string(rounded) + " bytes", err);
  }
  std::lock_guard<std::mutex> lock(registryMutex);
  registry()[reinterpret_cast<uintptr_t>(pointer)] =
      Allocation{rounded, fd, static_cast<uint64_t>(status.st_dev), static_cast<uint64_t>(status.st_ino)};
  return pointer;
}

void freeShareable(void* pointer) {
  Allocation allocation;
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    auto it = registry().find(reinterpret_cast<uintptr_t>(pointer));
    if (it == registry().end())
      fail(loomInvalidArgument, "loomMemFree: " + hex(pointer) +
                                    " is not the start of memory from loomMemAlloc (or was freed already)");
    if (it->second.pins > 0)
      fail(loomInvalidUsage, "loomMemFree: " + hex(pointer) + " is still registered with " +
                                 std::to_string(it->second.pins) +
                                 " communicator(s); loomCommDeregister it (or destroy the communicator) first");
    allocation = it->second;
    registry().erase(it);
  }
  munmap(pointer, allocation.bytes);
  close(allocation.fd);
}

std::optional<SharedRange> findShareable(const void* pointer, size_t bytes) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(pointer);
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = holding(start);
  if (it == registry().end() || bytes > it->first + it->second.bytes - start) return std::nullopt;
  return SharedRange{it->second.fd, it->second.device, it->second.inode, start - it->first};
}

void pinShareable(const void* pointer) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = holding(reinterpret_cast<uintptr_t>(pointer));
  if (it != registry().end()) ++it->second.pins;
}

void unpinShareable(const void* pointer) {
  std::lock_guard<std::mutex> lock(registryMutex);
  auto it = holding(reinterpret_cast<uintptr_t>(pointer));
  if (it != registry().end() && it->second.pins > 0) --it->second.pins;
}

}  // namespace loom::shm

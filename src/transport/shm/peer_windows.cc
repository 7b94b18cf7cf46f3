#include "transport/shm/peer_windows.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>

#include "base/error.h"
#include "transport/shm/peer_file.h"
#include "transport/shm/shareable_memory.h"

namespace loom::shm {
namespace {

// Tells this process from every other, even one with the same pid in
// another pid namespace. Made anew after fork, so a child never passes for
// its parent.
uint64_t processToken() {
  static std::mutex mutex;
  static pid_t owner = 0;
  static uint64_t token = 0;
  std::lock_guard<std::mutex> lock(mutex);
  if (owner != getpid()) {
    std::random_device random;
    token = (static_cast<uint64_t>(random()) << 32) ^ random();
    owner = getpid();
  }
  return token;
}

}  // namespace

WindowOffer offerWindow(const char* api, uint64_t window, const void* base, size_t bytes) {
  std::optional<SharedRange> range = findShareable(base, bytes);
  if (!range) {
    char where[32];
    std::snprintf(where, sizeof(where), "%p", base);
    fail(loomInvalidArgument, std::string(api) + ": the " + std::to_string(bytes) + " bytes at " + where +
                                  " are not all inside one allocation from loomMemAlloc; only such memory can be "
                                  "shared with peers");
  }
  return WindowOffer{window,       processToken(),    static_cast<int32_t>(getpid()),    range->fd, range->device,
                     range->inode, range->fileOffset, reinterpret_cast<uintptr_t>(base), bytes};
}

std::unique_ptr<MappedWindow> MappedWindow::open(const WindowOffer& offer, bool own, std::string* why) {
  std::unique_ptr<MappedWindow> window(new MappedWindow());
  window->remoteBase_ = offer.base;
  window->bytes_ = offer.bytes;
  if (offer.processToken == processToken() && offer.pid == getpid()) {
    window->local_ = reinterpret_cast<char*>(static_cast<uintptr_t>(offer.base));
    if (own) {
      pinShareable(window->local_);  // loomMemFree refuses it while registered
      window->pinned_ = true;
    }
    return window;
  }
  struct stat status {};
  int err = 0;
  int fd = openPeerFile({offer.pid, offer.fd, offer.device, offer.inode}, &status, why, &err);
  if (fd < 0) {
    if (err != 0)
      *why += std::string(": ") + std::strerror(err) +
              " (ranks in other pid namespaces or under another user cannot share registered memory)";
    return nullptr;
  }
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t start = offer.fileOffset / page * page;
  const uint64_t lead = offer.fileOffset - start;
  window->mappingBytes_ = lead + offer.bytes;
  // MAP_POPULATE: fault the pages in now, not in the middle of the first
  // collective that touches them.
  void* mapping = mmap(nullptr, window->mappingBytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                       static_cast<off_t>(start));
  err = errno;
  close(fd);
  if (mapping == MAP_FAILED) {
    *why = "cannot map " + std::to_string(offer.bytes) + " bytes of /proc/" + std::to_string(offer.pid) + "/fd/" +
           std::to_string(offer.fd) + ": " + std::strerror(err);
    return nullptr;
  }
  window->mapping_ = mapping;
  window->local_ = static_cast<char*>(mapping) + lead;
  return window;
}

bool MappedWindow::contains(uint64_t remote, size_t bytes) const {
  return remote >= remoteBase_ && remote - remoteBase_ <= bytes_ && bytes <= bytes_ - (remote - remoteBase_);
}

char* MappedWindow::translate(uint64_t remote, size_t bytes) const {
  return contains(remote, bytes) ? local_ + (remote - remoteBase_) : nullptr;
}

MappedWindow::~MappedWindow() {
  if (mapping_ != nullptr) munmap(mapping_, mappingBytes_);
  if (pinned_) unpinShareable(local_);
}

void makeRegionKey(const char* api, uint64_t window, const void* base, size_t bytes,
                   unsigned char key[kRegionKeyBytes]) {
  static_assert(sizeof(WindowOffer) <= kRegionKeyBytes);
  WindowOffer offer = offerWindow(api, window, base, bytes);
  std::memcpy(key, &offer, sizeof(offer));
}

std::unique_ptr<PeerRegion> openRegion(const unsigned char key[kRegionKeyBytes], bool own, std::string* why) {
  WindowOffer offer;
  std::memcpy(&offer, key, sizeof(offer));
  return MappedWindow::open(offer, own, why);
}

}  // namespace loom::shm

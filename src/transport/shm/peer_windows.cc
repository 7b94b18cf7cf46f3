#include "transport/shm/peer_windows.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <random>

#include "core/error.h"
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
  return WindowOffer{window,       processToken(), static_cast<int32_t>(getpid()), range->fd,
                     range->device, range->inode,  range->fileOffset,             reinterpret_cast<uintptr_t>(base),
                     bytes};
}

std::unique_ptr<MappedWindow> MappedWindow::open(const WindowOffer& offer, std::string* why) {
  std::unique_ptr<MappedWindow> window(new MappedWindow());
  window->remoteBase_ = offer.base;
  window->bytes_ = offer.bytes;
  if (offer.processToken == processToken() && offer.pid == getpid()) {
    window->local_ = reinterpret_cast<char*>(static_cast<uintptr_t>(offer.base));
    return window;
  }
  const std::string path = "/proc/" + std::to_string(offer.pid) + "/fd/" + std::to_string(offer.fd);
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *why = "cannot open " + path + ": " + std::strerror(errno) +
           " (ranks in other pid namespaces or under another user cannot share registered memory)";
    return nullptr;
  }
  struct stat status {};
  if (fstat(fd, &status) != 0 || static_cast<uint64_t>(status.st_dev) != offer.device ||
      static_cast<uint64_t>(status.st_ino) != offer.inode) {
    close(fd);
    *why = path + " is not the file that rank registered (is it in another pid namespace?)";
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
  int err = errno;
  close(fd);
  if (mapping == MAP_FAILED) {
    *why = "cannot map " + std::to_string(offer.bytes) + " bytes of " + path + ": " + std::strerror(err);
    return nullptr;
  }
  window->mapping_ = mapping;
  window->local_ = static_cast<char*>(mapping) + lead;
  return window;
}

MappedWindow::~MappedWindow() {
  if (mapping_ != nullptr) munmap(mapping_, mappingBytes_);
}

char* MappedWindow::translate(uint64_t remote, size_t bytes) const {
  if (remote < remoteBase_ || remote - remoteBase_ > bytes_ || bytes > bytes_ - (remote - remoteBase_)) return nullptr;
  return local_ + (remote - remoteBase_);
}

PeerWindows::~PeerWindows() {
  for (const Window& window : windows_) unpinShareable(window.ownBase);
}

void PeerWindows::add(uint64_t window, const void* ownBase, std::vector<std::unique_ptr<MappedWindow>> byRank) {
  pinShareable(ownBase);
  windows_.push_back(Window{window, ownBase, std::move(byRank)});
  next_ = window + 1;
}

bool PeerWindows::contains(uint64_t window) const {
  for (const Window& w : windows_)
    if (w.number == window) return true;
  return false;
}

void PeerWindows::remove(uint64_t window) {
  for (auto it = windows_.begin(); it != windows_.end(); ++it) {
    if (it->number != window) continue;
    unpinShareable(it->ownBase);
    windows_.erase(it);
    return;
  }
}

char* PeerWindows::translate(int rank, uint64_t address, size_t bytes) const {
  for (const Window& window : windows_)
    if (char* local = window.byRank[rank]->translate(address, bytes)) return local;
  return nullptr;
}

}  // namespace loom::shm

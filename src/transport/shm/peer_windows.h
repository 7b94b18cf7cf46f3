// Registered buffers of every rank, mapped into this process. After
// loomCommRegister each rank holds, for every registration, where each
// peer's buffer lives in that peer (its address) and here (a mapping of the
// same pages), so a collective whose buffers all lie in registered windows
// can read and write peers' buffers directly: one copy, no FIFO.
//
// Registration is collective and all-or-nothing (collectives/registration.cc),
// so every rank holds the same windows and, given the buffer addresses of a
// call, every rank reaches the same verdict on whether all are mapped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom::shm {

// What a rank sends its peers about one buffer it registers.
struct WindowOffer {
  uint64_t window;        // the registration's number, the same on every rank
  uint64_t processToken;  // equal tokens: the same process (ranks as threads)
  int32_t pid;
  int32_t fd;             // open in `pid`: a peer maps /proc/<pid>/fd/<fd>
  uint64_t device;        // st_dev and st_ino of that file, to be sure the
  uint64_t inode;         //   peer opened this file and not a namesake
  uint64_t fileOffset;    // of the buffer in the file
  uint64_t base;          // the buffer's address in `pid`
  uint64_t bytes;
};

// This process's offer for [base, base + bytes). Throws loomInvalidArgument
// naming `api` if the range is not inside memory from loomMemAlloc.
WindowOffer offerWindow(const char* api, uint64_t window, const void* base, size_t bytes);

// One rank's buffer as seen from this process.
class MappedWindow {
 public:
  // Maps the offer's pages here (or uses them as they are, in the offering
  // process). Null, with the reason in *why, if the pages cannot be reached.
  static std::unique_ptr<MappedWindow> open(const WindowOffer& offer, std::string* why);
  ~MappedWindow();
  MappedWindow(const MappedWindow&) = delete;
  MappedWindow& operator=(const MappedWindow&) = delete;

  // Where [remote, remote + bytes) of the owner is here, or null if the
  // range is not all inside this window.
  char* translate(uint64_t remote, size_t bytes) const;

 private:
  MappedWindow() = default;
  uint64_t remoteBase_ = 0;
  uint64_t bytes_ = 0;
  char* local_ = nullptr;
  void* mapping_ = nullptr;  // null when local_ is the owner's own memory
  size_t mappingBytes_ = 0;
};

class PeerWindows {
 public:
  PeerWindows() = default;
  ~PeerWindows();
  PeerWindows(const PeerWindows&) = delete;
  PeerWindows& operator=(const PeerWindows&) = delete;

  // The number the next registration gets (1, 2, ...).
  uint64_t nextWindow() const { return next_; }
  // `byRank[r]` is rank r's buffer; this rank's own entry pins its memory
  // against loomMemFree until the window is removed.
  void add(uint64_t window, const void* ownBase, std::vector<std::unique_ptr<MappedWindow>> byRank);
  bool contains(uint64_t window) const;
  void remove(uint64_t window);
  bool empty() const { return windows_.empty(); }

  // Rank `rank`'s [address, address + bytes) here, or null unless it lies
  // inside one of that rank's registered windows.
  char* translate(int rank, uint64_t address, size_t bytes) const;

  // How many collectives ran single-copy on these windows: lets tests (and
  // a curious user with LOOM_DEBUG) see that registration was used.
  void countSingleCopyCall() { ++singleCopyCalls_; }
  uint64_t singleCopyCalls() const { return singleCopyCalls_; }

 private:
  struct Window {
    uint64_t number;
    const void* ownBase;
    std::vector<std::unique_ptr<MappedWindow>> byRank;
  };
  uint64_t next_ = 1;
  uint64_t singleCopyCalls_ = 0;
  std::vector<Window> windows_;
};

}  // namespace loom::shm

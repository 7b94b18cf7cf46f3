// Registered buffers (loomCommRegister), whatever transport reaches them. A
// rank offers a buffer with one opaque key per transport kind that can
// register memory (shm: the memfd window; RDMA: an rkey; CUDA: an IPC
// handle); each peer opens the key of the kind that connects the two, and
// algorithms ask for "rank r's view of this address", never for a
// transport's types.
//
// Registration is collective and all-or-nothing (collectives/
// window_registration.cc), so every rank holds the same windows and, given
// the buffer addresses of a call, every rank reaches the same verdict on
// whether all are reachable. A registration among ranks some of which reach
// each other over a transport that cannot register memory maps nothing on
// any rank.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace loom {

constexpr size_t kRegionKeyBytes = 64;
constexpr size_t kMaxRegionKinds = 4;

// What a rank sends its peers about one buffer it registers (plain bytes).
struct RegionOffer {
  uint64_t window;  // the registration's number, the same on every rank
  uint64_t base;    // the buffer's address in the offering process
  uint64_t bytes;
  uint64_t kinds;  // bit k: keys[k] holds transport kind k's key
  unsigned char keys[kMaxRegionKinds][kRegionKeyBytes];
};

// One rank's registered buffer as this process reaches it.
class PeerRegion {
 public:
  virtual ~PeerRegion() = default;
  // Where [remote, remote + bytes) of the owner is here, or null if the
  // range is not all inside this region.
  virtual char* translate(uint64_t remote, size_t bytes) const = 0;
};

class RegisteredRegions {
 public:
  // The number the next registration gets (1, 2, ...).
  uint64_t nextWindow() const { return next_; }
  // `byRank[r]` is communicator rank r's buffer. An empty `byRank`: the
  // registration stands (it can be deregistered) but maps nothing, because
  // some rank reaches a peer over a transport that cannot register memory
  // (tcp); calls on it then run through the FIFOs on every rank alike.
  void add(uint64_t window, std::vector<std::unique_ptr<PeerRegion>> byRank);
  bool contains(uint64_t window) const;
  void remove(uint64_t window);
  bool empty() const { return windows_.empty(); }
  // Whether any registration maps peers' buffers.
  bool anyMapped() const;

  // Rank `rank`'s [address, address + bytes) here, or null unless it lies
  // inside one of that rank's registered buffers.
  char* translate(int rank, uint64_t address, size_t bytes) const;

  // How many collectives ran single-copy on these buffers: lets tests (and
  // a curious user with LOOM_DEBUG) see that registration was used.
  void countSingleCopyCall() { ++singleCopyCalls_; }
  uint64_t singleCopyCalls() const { return singleCopyCalls_; }

 private:
  struct Window {
    uint64_t number;
    std::vector<std::unique_ptr<PeerRegion>> byRank;
  };
  uint64_t next_ = 1;
  uint64_t singleCopyCalls_ = 0;
  std::vector<Window> windows_;
};

}  // namespace loom

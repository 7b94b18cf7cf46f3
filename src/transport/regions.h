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

#include "transport/peer_memory.h"

namespace loom {

constexpr size_t kRegionKeyBytes = 64;

// One transport kind's key to a registered buffer.
struct RegionKey {
  uint32_t kind = 0;  // index in transportKinds()
  uint32_t unused = 0;
  unsigned char bytes[kRegionKeyBytes] = {};
};

// What a rank sends its peers about one buffer it registers: a key from
// each kind that can register memory, however many the build has.
struct RegionOffer {
  uint64_t window = 0;  // the registration's number, the same on every rank
  uint64_t base = 0;    // the buffer's address in the offering process
  uint64_t bytes = 0;
  std::vector<RegionKey> keys;

  // The key of transport kind `kind`, or null if the offer has none.
  const RegionKey* keyOf(int kind) const;
  // As it travels: plain bytes, as many for every offer of one build.
  std::vector<unsigned char> encode() const;
  // Throws loomRemoteError naming `sender` when `data` is not an offer
  // of `size` bytes with at most `kinds` keys.
  static RegionOffer decode(const unsigned char* data, size_t size, size_t kinds, int sender);
};

// One rank's registered buffer as this process reaches it. A key gives
// local access to this rank's own buffer (opened with `own`: an RDMA kind's
// lkey) and remote access to a peer's (its rkey); the CPU kinds map both.
class PeerRegion {
 public:
  virtual ~PeerRegion() = default;
  // Whether [remote, remote + bytes) of the owner lies inside this region.
  virtual bool contains(uint64_t remote, size_t bytes) const = 0;
  // Where that range is in this process, for plain loads and stores; null
  // if it is not inside the region, or if this kind reaches the owner's
  // memory only through posted transfers (a NIC's RDMA, a device copy).
  virtual char* translate(uint64_t remote, size_t bytes) const = 0;
  // Posted copies between this rank's `local` buffer and the owner's range
  // (inside the region): neither may be touched until completions() is
  // ready (`co_await TransfersDone{region.completions(), wait}`). A kind
  // that maps the memory copies as it posts, which these defaults do.
  virtual void postRead(uint64_t remote, void* local, size_t bytes);
  virtual void postWrite(uint64_t remote, const void* local, size_t bytes);
  virtual Waitable& completions() { return done_; }

 private:
  DoneWhenPosted done_;
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
  // inside one of that rank's registered buffers and this process maps it.
  char* translate(int rank, uint64_t address, size_t bytes) const;
  // The registered buffer of rank `rank` that holds [address, address +
  // bytes), mapped here or reached by posted transfers; null if none.
  PeerRegion* regionOf(int rank, uint64_t address, size_t bytes) const;

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

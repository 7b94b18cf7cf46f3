#include "transport/mem/mem_transport.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

#include "base/error.h"
#include "transport/mem/mem_fifo.h"
#include "transport/mem/mem_settings.h"

namespace loom::mem {
namespace {

// Peers' buffers are this process's: read in place, or copied at once.
class SameProcessMemory final : public PeerMemory {
 public:
  const void* inPlace(int /*peer*/, const void* remote) const override { return remote; }
  void postRead(int /*peer*/, const void* remote, void* local, size_t bytes, const WaitContext& /*ctx*/) override {
    std::memcpy(local, remote, bytes);
  }
  void postWrite(int /*peer*/, void* remote, const void* local, size_t bytes, const WaitContext& /*ctx*/) override {
    std::memcpy(remote, local, bytes);
  }
  Waitable& completions() override { return done_; }

 private:
  DoneWhenPosted done_;
};

// Fabrics being set up, by name, for the ranks of this process that look
// them up in the same init round.
std::mutex fabricsMutex;
std::map<std::string, std::weak_ptr<Fabric>>& fabricsByName() {
  static std::map<std::string, std::weak_ptr<Fabric>> fabrics;
  return fabrics;
}

std::string publish(const std::shared_ptr<Fabric>& fabric) {
  static std::atomic<uint64_t> made{0};
  const std::string name = "mem-" + std::to_string(getpid()) + "-" + std::to_string(++made);
  std::lock_guard<std::mutex> lock(fabricsMutex);
  auto& fabrics = fabricsByName();
  for (auto it = fabrics.begin(); it != fabrics.end();) it = it->second.expired() ? fabrics.erase(it) : std::next(it);
  fabrics[name] = fabric;
  return name;
}

std::shared_ptr<Fabric> find(const std::string& name) {
  std::lock_guard<std::mutex> lock(fabricsMutex);
  auto it = fabricsByName().find(name);
  return it != fabricsByName().end() ? it->second.lock() : nullptr;
}

// A registered buffer's key: the process it lives in, where, and whether
// peers may map it or reach it only through posted transfers.
struct SameProcessKey {
  int64_t pid;
  uint64_t window;
  uint64_t base;
  uint64_t bytes;
  uint64_t postedOnly;
};
static_assert(sizeof(SameProcessKey) <= kRegionKeyBytes);

// With LOOM_MEM_REGIONS=posted it stands in for a kind whose peers reach
// registered memory only through posted transfers (an RDMA NIC): it maps
// nothing, and its transfers complete only when the schedule next looks,
// never as they are posted.
class SameProcessRegion final : public PeerRegion {
 public:
  explicit SameProcessRegion(const SameProcessKey& key) : key_(key) {}
  bool contains(uint64_t remote, size_t bytes) const override {
    return remote >= key_.base && bytes <= key_.bytes && remote - key_.base <= key_.bytes - bytes;
  }
  char* translate(uint64_t remote, size_t bytes) const override {
    return key_.postedOnly == 0 && contains(remote, bytes) ? reinterpret_cast<char*>(remote) : nullptr;
  }
  void postRead(uint64_t remote, void* local, size_t bytes) override {
    check(remote, bytes);
    pending_.posted(local, reinterpret_cast<const void*>(remote), bytes);
  }
  void postWrite(uint64_t remote, const void* local, size_t bytes) override {
    check(remote, bytes);
    pending_.posted(reinterpret_cast<void*>(remote), local, bytes);
  }
  Waitable& completions() override { return pending_; }

 private:
  void check(uint64_t remote, size_t bytes) const {
    if (!contains(remote, bytes))
      fail(loomInternalError, "a transfer of " + std::to_string(bytes) + " bytes at " + std::to_string(remote) +
                                  " lies outside the registered buffer it was posted to");
  }
  // Copies held until the first look at completions, which makes them.
  class Pending final : public Waitable {
   public:
    void posted(void* to, const void* from, size_t bytes) { copies_.push_back({to, from, bytes}); }
    int peer() const override { return -1; }
    size_t slotBytes() const override { return 0; }
    bool ready() override {
      for (const Copy& copy : copies_) std::memcpy(copy.to, copy.from, copy.bytes);
      copies_.clear();
      return true;
    }
    void checkPeer(const WaitContext& /*ctx*/) override {}
    const char* peerMustDo() const override { return "to let a transfer complete"; }
    void watch(bool /*on*/) override {}

   private:
    struct Copy {
      void* to;
      const void* from;
      size_t bytes;
    };
    std::vector<Copy> copies_;
  };

  SameProcessKey key_;
  Pending pending_;
};

}  // namespace

void makeRegionKey(const char* /*api*/, uint64_t window, const void* base, size_t bytes,
                   unsigned char key[kRegionKeyBytes]) {
  const std::shared_ptr<const KindSettings> read = readSettings();  // kept: the reference below points into it
  const auto& settings = static_cast<const MemSettings&>(*read);
  const SameProcessKey mine{getpid(), window, reinterpret_cast<uint64_t>(base), bytes,
                            settings.postedRegions ? 1u : 0u};
  std::memcpy(key, &mine, sizeof(mine));
}

std::unique_ptr<PeerRegion> openRegion(const unsigned char key[kRegionKeyBytes], bool /*own*/, std::string* why) {
  SameProcessKey theirs;
  std::memcpy(&theirs, key, sizeof(theirs));
  if (theirs.pid != getpid()) {
    *why = "the buffer is in process " + std::to_string(theirs.pid) + ", not this one";
    return nullptr;
  }
  return std::make_unique<SameProcessRegion>(theirs);
}

bool canConnect(const RankIdentity& a, const RankIdentity& b) {
  return a.host == b.host && a.pid == b.pid;
}

std::unique_ptr<Transport> connect(const TransportSetup& setup) {
  const auto& settings = static_cast<const MemSettings&>(setup.own);
  int lowest = setup.rank;
  for (int peer : setup.peers) lowest = std::min(lowest, peer);
  // The group's lowest rank makes the fabric and names it in the round;
  // the others find it by that name in this process.
  std::shared_ptr<Fabric> fabric;
  std::string entry;
  if (!setup.peers.empty() && lowest == setup.rank) {
    Faults faults;
    faults.maxDelayMicros = settings.maxDelayMicros;
    fabric = std::make_shared<Fabric>(static_cast<int>(setup.identities.size()), settings.slotShape(), faults);
    entry = publish(fabric);
  }
  const std::vector<std::string> entries = setup.rendezvous.allGather(entry);
  if (fabric == nullptr && !setup.peers.empty()) fabric = find(entries[lowest]);
  // The registry holds the fabric weakly: its maker must not finish init
  // (and, with nothing to do, destroy its communicator and the fabric)
  // before every rank has taken its own reference. Every rank takes part in
  // this round, as in the one above, where any rank made a fabric (every
  // rank sees the same entries, so all decide alike).
  if (std::any_of(entries.begin(), entries.end(), [](const std::string& e) { return !e.empty(); }))
    setup.rendezvous.allGather("");
  if (setup.peers.empty()) return std::make_unique<MemTransport>(nullptr, setup.rank);
  if (fabric == nullptr)
    fail(loomInternalError, "rank " + std::to_string(setup.rank) + " cannot find the in-memory fabric '" +
                                entries[lowest].substr(0, 64) + "' that rank " + std::to_string(lowest) +
                                " made: it is gone, or in another process");
  return std::make_unique<MemTransport>(std::move(fabric), setup.rank, setup.peers);
}

MemTransport::MemTransport(std::shared_ptr<Fabric> fabric, int rank, std::vector<int> peers)
    : fabric_(std::move(fabric)), rank_(rank) {
  if (fabric_ == nullptr) return;  // a rank with no peer here, which took part in the setup round
  connects_.assign(static_cast<size_t>(fabric_->nranks()), peers.empty());
  for (int peer : peers) connects_[peer] = true;
  connects_[rank] = false;
  if (fabric_->faults().singleCopy) peerMemory_ = std::make_unique<SameProcessMemory>();
}

void MemTransport::checkConnects(int peer) const {
  if (peer < 0 || peer >= static_cast<int>(connects_.size()) || !connects_[peer])
    fail(loomInternalError,
         "rank " + std::to_string(rank_) + " has no in-memory connection to rank " + std::to_string(peer));
}

SendConnection& MemTransport::sendTo(int peer, Channel channel) {
  std::lock_guard<std::mutex> lock(connectionsMutex_);
  std::unique_ptr<SendConnection>& connection = send_[index(peer, channel)];
  if (connection == nullptr) {
    checkConnects(peer);
    connection = std::make_unique<MemSendConnection>(*fabric_, rank_, peer, channel);
  }
  return *connection;
}

RecvConnection& MemTransport::recvFrom(int peer, Channel channel) {
  std::lock_guard<std::mutex> lock(connectionsMutex_);
  std::unique_ptr<RecvConnection>& connection = recv_[index(peer, channel)];
  if (connection == nullptr) {
    checkConnects(peer);
    connection = std::make_unique<MemRecvConnection>(*fabric_, rank_, peer, channel);
  }
  return *connection;
}

MemTransport::~MemTransport() {
  if (fabric_ != nullptr) fabric_->leave(rank_);
}

void MemTransport::announceCollectiveStarted(const CollectiveCall& call) {
  RankBoard& mine = fabric_->board(rank_);
  mine.publishCall(call);
  mine.collectivesStarted.store(call.number, std::memory_order_release);
}

int64_t MemTransport::collectivesStartedBy(int peer) const {
  return static_cast<int64_t>(fabric_->board(peer).collectivesStarted.load(std::memory_order_acquire));
}

void MemTransport::publishProgress(int64_t nowMs, int waitingFor) {
  RankBoard& mine = fabric_->board(rank_);
  mine.waitingFor.store(waitingFor, std::memory_order_relaxed);
  mine.heartbeatMs.store(nowMs, std::memory_order_release);
}

PeerProgress MemTransport::progressOf(int peer) const {
  const RankBoard& theirs = fabric_->board(peer);
  PeerProgress progress;
  progress.heartbeatMs = theirs.heartbeatMs.load(std::memory_order_acquire);
  progress.known = progress.heartbeatMs != 0;
  progress.waitingFor = theirs.waitingFor.load(std::memory_order_relaxed);
  return progress;
}

std::string MemTransport::peerMemoryUnavailable() const {
  return peerMemory_ != nullptr ? std::string() : "the in-memory fabric was made without single-copy transfers";
}

std::string MemTransport::describe() const {
  if (fabric_ == nullptr || !fabric_->delays()) return "MEM";
  return "MEM (delays up to " + std::to_string(fabric_->faults().maxDelayMicros) + " us)";
}

}  // namespace loom::mem

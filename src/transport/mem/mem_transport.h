// The in-memory transport: ranks of one process (threads, or virtual ranks
// one thread drives) connected through a Fabric (mem_fabric.h) with
// injectable delay and failure. A registry kind for tests and tools, never
// chosen unless LOOM_TRANSPORTS names it ("mem"); tests that drive the
// engine or the schedules alone build a Fabric and its transports directly.
// It is also the smallest complete transport, and docs/ENGINE.md points to
// it as the example of what a transport implements.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "transport/mem/mem_fabric.h"
#include "transport/regions.h"
#include "transport/transport.h"

namespace loom::mem {

// The registry's entries: ranks of one process.
bool canConnect(const RankIdentity& a, const RankIdentity& b);
std::unique_ptr<Transport> connect(const TransportSetup& setup);
// Registration among ranks of one process: a key is the buffer's address,
// which every rank uses as it is.
void makeRegionKey(const char* api, uint64_t window, const void* base, size_t bytes,
                   unsigned char key[kRegionKeyBytes]);
std::unique_ptr<PeerRegion> openRegion(const unsigned char key[kRegionKeyBytes], bool own, std::string* why);

class MemTransport final : public Transport {
 public:
  // Connects `rank` to `peers` (all other ranks of the fabric when empty).
  MemTransport(std::shared_ptr<Fabric> fabric, int rank, std::vector<int> peers = {});
  // As the process of a rank that exits: its peers are told it left.
  ~MemTransport() override;

  // Made on first use (a schedule on thousands of ranks touches few pairs).
  SendConnection& sendTo(int peer, Channel channel) override;
  RecvConnection& recvFrom(int peer, Channel channel) override;
  Doorbell* doorbell() override { return &fabric_->board(rank_).doorbell; }
  void announceCollectiveStarted(const CollectiveCall& call) override;
  int64_t collectivesStartedBy(int peer) const override;
  void announceFailure(const std::string& sentence) override { fabric_->fail(rank_, sentence); }
  void publishProgress(int64_t nowMs, int waitingFor) override;
  PeerProgress progressOf(int peer) const override;
  PeerMemory* peerMemory() const override { return peerMemory_.get(); }
  std::string peerMemoryUnavailable() const override;
  std::string describe() const override;

 private:
  size_t index(int peer, Channel channel) const {
    return static_cast<size_t>(channel) * fabric_->nranks() + static_cast<size_t>(peer);
  }
  // Throws unless `peer` is one this transport connects.
  void checkConnects(int peer) const;

  std::shared_ptr<Fabric> fabric_;
  int rank_;
  std::vector<bool> connects_;   // by rank
  std::mutex connectionsMutex_;  // a connection is made by whichever thread drives the engine then
  std::unordered_map<size_t, std::unique_ptr<SendConnection>> send_;  // by index(peer, channel)
  std::unordered_map<size_t, std::unique_ptr<RecvConnection>> recv_;
  std::unique_ptr<PeerMemory> peerMemory_;
};

}  // namespace loom::mem

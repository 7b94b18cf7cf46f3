// A rank's connections to every peer of its communicator, each pair over the
// transport the registry chose for it (registry.h). This is what the engine
// and the algorithms use: they never see which transport carries a peer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/doorbell.h"
#include "bootstrap/rendezvous.h"
#include "transport/identity.h"
#include "transport/idle_sleep.h"
#include "transport/registry.h"
#include "transport/transport.h"

namespace loom {

class Connections {
 public:
  // Chooses a transport per pair and sets up every kind, collectively over
  // all ranks. Throws loomUnsupported naming a pair no allowed kind connects.
  Connections(int rank, const std::vector<RankIdentity>& identities, const TransportFilter& filter,
              const TransportSettings& settings, bootstrap::RendezvousClient& rendezvous);
  // One transport, already connected, that carries every peer: transport
  // kind `kind` (in transportKinds()) with FIFOs of `shape`, among ranks
  // of one process (mem/mem_transport.h; tests and tools drive the engine
  // and the schedules so, with no rendezvous).
  Connections(int rank, int nranks, int kind, SlotShape shape, std::unique_ptr<Transport> transport);
  // Transports go in the reverse order of their setup: a later one (tcp)
  // may ring the doorbell an earlier one (shm) holds until its thread ends.
  ~Connections();
  Connections(const Connections&) = delete;
  Connections& operator=(const Connections&) = delete;

  SendConnection& sendTo(int peer, Channel channel = Channel::kCollective) {
    return byPeer_[peer]->sendTo(peer, channel);
  }
  RecvConnection& recvFrom(int peer, Channel channel = Channel::kCollective) {
    return byPeer_[peer]->recvFrom(peer, channel);
  }
  // The name of the transport that carries `peer` ("shm"), and its index in
  // transportKinds() (-1 for this rank).
  const char* transportName(int peer) const;
  // How `peer` is reached, for logs: "SHM", "TCP/10.0.0.1 (2 sockets)".
  std::string describeLink(int peer) const { return byPeer_[peer] != nullptr ? byPeer_[peer]->describe() : "self"; }
  int kindOf(int peer) const { return kindOf_[peer]; }
  // The largest message one slot carries on every link among `ranks`: the
  // smallest slot of the kinds that connect them. The choice of kind per
  // pair follows from identities alone, so every rank computes the same
  // for the same ranks, and algorithms that cut messages by it cut them
  // alike at both ends of every link.
  size_t slotBytesAmong(const std::vector<int>& ranks) const;
  // The slots of the link between ranks `a` and `b`, as every rank sees it
  // (the kind follows from their identities; settings agree).
  SlotShape slotShapeBetween(int a, int b) const;
  // The slots of the link to `peer` (its kind's, under this rank's settings).
  SlotShape slotShapeOf(int peer) const { return kindOf_[peer] >= 0 ? slotShapeOfKind_[kindOf_[peer]] : SlotShape{}; }
  // Some peer's data moves on a thread of its transport's own
  // (Transport::ProgressBy::kOwnThread), which needs a CPU of its own.
  bool anyProgressThread() const;
  // Where this rank's engine sleeps when none of its waits can move: the
  // first transport's doorbell that has one (peers ring it), and the
  // descriptors of the transports that move data on their own threads.
  IdleSleep& idleSleep() { return *idleSleep_; }

  void announceCollectiveStarted(const CollectiveCall& call);
  // -1 when the peer's transport cannot see its count (or peer is this rank).
  int64_t collectivesStartedBy(int peer) const {
    return byPeer_[peer] != nullptr ? byPeer_[peer]->collectivesStartedBy(peer) : -1;
  }
  void announceFailure(const std::string& sentence);
  void publishProgress(int64_t nowMs, int waitingFor);
  PeerProgress progressOf(int peer) const {
    return byPeer_[peer] != nullptr ? byPeer_[peer]->progressOf(peer) : PeerProgress{};
  }

  // Single-copy reads of every peer's memory: only when one transport
  // carries every peer and offers them (all ranks decide alike at init).
  PeerMemory* peerMemory() const;
  // Why peerMemory() is null; empty when it is not, or was not asked for.
  std::string peerMemoryUnavailable() const;
  // The links' rates the network transport's rounds gathered (every rank
  // learns the same, with TCP peers or not); none where no rank has TCP peers.
  NetworkRate networkRate() const { return networkRate_; }

 private:
  static std::string differences(const std::string& theirs, int peer, const std::string& mine, int rank);
  void checkSettingsAgree(const TransportSettings& settings, bootstrap::RendezvousClient& rendezvous);
  void makeIdleSleep();

  int rank_;
  std::vector<RankIdentity> identities_;  // by rank, for slotBytesAmong; empty when one kind carries every pair
  TransportFilter filter_;
  std::vector<SlotShape> slotShapeOfKind_;              // by index in transportKinds()
  std::vector<std::unique_ptr<Transport>> transports_;  // the kinds that carry at least one peer
  std::vector<Transport*> byPeer_;                      // by communicator rank; null for this rank
  std::vector<int> kindOf_;                             // index in transportKinds(), by rank; -1 for this rank
  Doorbell ownDoorbell_;                                // when no transport has one
  std::unique_ptr<IdleSleep> idleSleep_;
  NetworkRate networkRate_;
};

}  // namespace loom

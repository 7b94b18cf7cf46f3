// Shared-memory connections between the ranks of one host. Each rank
// creates one segment holding its status page and, per channel, a FIFO from
// every peer to itself (the receiver owns its incoming FIFOs), and maps
// every peer's segment to reach its FIFOs to them. The peers are the ranks
// the registry chose shared memory for (transport/registry.h): on several
// hosts, each host's ranks form a group of their own.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap/rendezvous.h"
#include "transport/connection.h"
#include "transport/identity.h"
#include "transport/registry.h"
#include "transport/shm/shm_fifo.h"
#include "transport/shm/shm_segment.h"
#include "transport/shm/shm_status.h"
#include "transport/transport.h"

namespace loom::shm {

// The registry's entries for shared memory: ranks of one host.
bool canConnect(const RankIdentity& a, const RankIdentity& b);
std::unique_ptr<Transport> connect(const TransportSetup& setup);

class ShmTransport final : public Transport {
 public:
  // Collective over every rank of the communicator (ranks without shm
  // peers too): two rendezvous rounds (names, then "all mapped"), after
  // which the segment names are unlinked, and with tryPeerMemory a third in
  // which ranks agree whether cross-memory attach works among all.
  ShmTransport(int rank, const std::vector<int>& peers, const std::vector<pid_t>& pids, FifoGeometry geometry,
               bool tryPeerMemory, bootstrap::RendezvousClient& rendezvous);

  SendConnection& sendTo(int peer, Channel channel) override { return *send_[index(peer, channel)]; }
  RecvConnection& recvFrom(int peer, Channel channel) override { return *recv_[index(peer, channel)]; }
  Doorbell* doorbell() override { return &statusOf(rank_).doorbell; }
  void announceCollectiveStarted(const CollectiveCall& call) override;
  int64_t collectivesStartedBy(int peer) const override;
  void announceFailure(const std::string& sentence) override;
  void publishProgress(int64_t nowMs, int waitingFor) override;
  PeerProgress progressOf(int peer) const override;
  PeerMemory* peerMemory() const override { return peerMemory_.get(); }
  std::string peerMemoryUnavailable() const override { return peerMemoryUnavailable_; }
  std::string describe() const override { return "SHM"; }

 private:
  static constexpr size_t kStatusBytes = StatusPage::kBytes;
  // By communicator rank: the rank's place in this host's group, or -1.
  int member(int rank) const { return members_[rank]; }
  StatusPage& statusOf(int rank) const { return *static_cast<StatusPage*>(segments_[member(rank)]->data()); }
  size_t index(int peer, Channel channel) const { return static_cast<size_t>(channel) * group_.size() + member(peer); }

  int rank_;
  std::vector<int> group_;    // communicator ranks of this host's group, ascending, this rank included
  std::vector<int> members_;  // by communicator rank: index in group_, or -1
  std::vector<std::optional<ShmSegment>> segments_;    // by index in group_
  std::vector<std::unique_ptr<SendConnection>> send_;  // by index(peer, channel)
  std::vector<std::unique_ptr<RecvConnection>> recv_;
  std::unique_ptr<PeerMemory> peerMemory_;
  std::string peerMemoryUnavailable_;

  // Maps every peer's segment from its init entry.
  void mapPeers(const std::vector<int>& peers, const std::vector<std::string>& entries, FifoGeometry geometry,
                size_t segmentBytes, std::vector<const void*>& probes);
  void agreeOnPeerMemory(const std::vector<pid_t>& pids, const std::vector<const void*>& probes,
                         bootstrap::RendezvousClient& rendezvous);
};

}  // namespace loom::shm

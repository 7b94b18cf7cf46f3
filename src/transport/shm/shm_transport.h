// Shared-memory connections between every pair of ranks on one host. Each
// rank creates one segment holding a FIFO from every peer to itself (the
// receiver owns its incoming FIFOs) and maps every peer's segment to reach
// its FIFOs to them.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/rendezvous.h"
#include "transport/connection.h"
#include "transport/shm/shm_fifo.h"
#include "transport/shm/shm_segment.h"
#include "transport/shm/shm_status.h"
#include "transport/transport.h"

namespace loom::shm {

class ShmTransport final : public Transport {
 public:
  // Collective: uses two rendezvous rounds (names, then "all mapped"),
  // after which the segment names are unlinked, and with tryPeerMemory a
  // third in which ranks agree whether cross-memory attach works among all.
  ShmTransport(int rank, const std::vector<pid_t>& pids, FifoGeometry geometry, bool tryPeerMemory,
               bootstrap::RendezvousClient& rendezvous);

  SendConnection& sendTo(int peer) override { return *send_[peer]; }
  RecvConnection& recvFrom(int peer) override { return *recv_[peer]; }
  void announceCollectiveStarted(const CollectiveCall& call) override;
  int64_t collectivesStartedBy(int peer) const override;
  void announceFailure(const std::string& sentence) override;
  const PeerMemory* peerMemory() const override { return peerMemory_.get(); }
  // Why single-copy reads are off (empty when they are on or were not tried).
  const std::string& peerMemoryUnavailable() const { return peerMemoryUnavailable_; }

 private:
  StatusPage& statusOf(int rank) const { return *static_cast<StatusPage*>(segments_[rank].data()); }
  static constexpr size_t kStatusBytes = StatusPage::kBytes;

  int rank_;
  std::vector<ShmSegment> segments_;  // index = owning rank
  std::vector<std::unique_ptr<SendConnection>> send_;
  std::vector<std::unique_ptr<RecvConnection>> recv_;
  std::unique_ptr<PeerMemory> peerMemory_;
  std::string peerMemoryUnavailable_;

  void agreeOnPeerMemory(const std::vector<pid_t>& pids, const std::vector<const void*>& probes,
                         bootstrap::RendezvousClient& rendezvous);
};

}  // namespace loom::shm

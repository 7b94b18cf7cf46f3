// TCP connections between ranks, for ranks on different hosts (or on one
// host with LOOM_TRANSPORTS=tcp). Per peer and channel, LOOM_SOCKET_NSOCKS
// sockets carry the slots in turn; a progress thread (tcp_progress.h) moves
// them, and the engine sees slot FIFOs as with shared memory. What a shm
// peer shows on its status page travels as control frames: a failure at
// once, a heartbeat (with the collective it runs) every 50 ms while the
// rank has operations pending.
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/wakeup.h"
#include "transport/registry.h"
#include "transport/tcp/tcp_connection.h"
#include "transport/tcp/tcp_progress.h"
#include "transport/tcp/tcp_rings.h"
#include "transport/tcp/tcp_setup.h"
#include "transport/transport.h"

namespace loom::tcp {

// The registry's entries: any two ranks, since every host has a network.
bool canConnect(const RankIdentity& a, const RankIdentity& b);
std::unique_ptr<Transport> connect(const TransportSetup& setup);

class TcpTransport final : public Transport {
 public:
  // Collective over every rank of the communicator (one rendezvous round).
  explicit TcpTransport(const TransportSetup& setup);
  ~TcpTransport() override;

  SendConnection& sendTo(int peer, Channel channel) override { return *at(peer).send[index(channel)]; }
  RecvConnection& recvFrom(int peer, Channel channel) override { return *at(peer).recv[index(channel)]; }
  Doorbell* doorbell() override { return nullptr; }
  ProgressBy progressBy() const override { return ProgressBy::kOwnThread; }
  void useIdleSleep(IdleSleep* engine) override;
  void takeBackDescriptors() override;
  void announceCollectiveStarted(const CollectiveCall& call) override;
  int64_t collectivesStartedBy(int peer) const override;
  void announceFailure(const std::string& sentence) override;
  void publishProgress(int64_t nowMs, int waitingFor) override;
  PeerProgress progressOf(int peer) const override;
  PeerMemory* peerMemory() const override { return nullptr; }
  std::string peerMemoryUnavailable() const override;
  std::string describe() const override;
  NetworkRate networkRate() const override { return links_.slowest; }

 private:
  struct Peer {
    PeerName name;
    std::unique_ptr<PeerState> state;
    std::array<std::unique_ptr<SendRing>, kChannels> sendRings;
    std::array<std::unique_ptr<RecvRing>, kChannels> recvRings;
    std::array<std::unique_ptr<TcpSendConnection>, kChannels> send;
    std::array<std::unique_ptr<TcpRecvConnection>, kChannels> recv;
  };
  static size_t index(Channel channel) { return static_cast<size_t>(channel); }
  const Peer& at(int peer) const { return peers_[slotOf_[peer]]; }
  Peer& at(int peer) { return peers_[slotOf_[peer]]; }

  int rank_;
  int socketsPerPeer_;
  TcpLinks links_;           // where this rank's TCP listener was (eth0), and the slowest link
  std::vector<int> slotOf_;  // by communicator rank: index in peers_, or -1
  std::vector<Peer> peers_;
  Wakeup wakeup_;
  std::unique_ptr<TcpProgress> progress_;
  std::mutex beatMutex_;   // the posting thread and the driving thread both touch the beat
  HeartbeatPayload beat_;  // what the next heartbeat says
  int64_t lastBeatMs_ = 0;
  // At destroy, what was posted is still sent (a Send that returned must
  // arrive) until none of it could be sent for this long: the communicator's timeout,
  // as for any wait on a peer; shorter once this rank failed or aborted.
  std::atomic<int64_t> stopQuietMs_{0};
};

}  // namespace loom::tcp

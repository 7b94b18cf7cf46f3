#include "transport/tcp/tcp_transport.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"
#include "transport/tcp/tcp_settings.h"
#include "transport/tcp/tcp_setup.h"

namespace loom::tcp {
namespace {

// A heartbeat goes out at most this often, however often the engine
// publishes its progress.
constexpr int64_t kBeatEveryMs = 50;
// After a failure or an abort, what is still posted belongs to operations
// that failed: destroy stops sending once nothing has moved for this long
// (the failure sentence, a control frame, goes out ahead of data).
constexpr int64_t kFailedFlushMs = 200;

std::string controlFrame(FrameKind kind, const void* payload, size_t bytes) {
  FrameHeader header{kind, static_cast<uint32_t>(bytes), 0};
  std::string frame(reinterpret_cast<const char*>(&header), sizeof(header));
  frame.append(static_cast<const char*>(payload), bytes);
  return frame;
}

}  // namespace

bool canConnect(const RankIdentity& /*a*/, const RankIdentity& /*b*/) {
  return true;
}

std::unique_ptr<Transport> connect(const TransportSetup& setup) {
  return std::make_unique<TcpTransport>(setup);
}

TcpTransport::TcpTransport(const TransportSetup& setup)
    : rank_(setup.rank),
      socketsPerPeer_(static_cast<const TcpSettings&>(setup.own).socketsPerPeer),
      slotOf_(setup.identities.size(), -1),
      stopQuietMs_(setup.settings.timeoutMs) {
  std::vector<std::vector<bootstrap::Socket>> sockets = connectPeers(setup, &links_);
  if (setup.peers.empty()) return;
  const auto& settings = static_cast<const TcpSettings&>(setup.own);
  const RingGeometry geometry{settings.slotBytes, settings.slots};
  // Until TcpProgress holds the descriptors, `sockets` owns them, so an
  // allocation that throws on the way closes them all.
  peers_.resize(setup.peers.size());
  for (size_t p = 0; p < setup.peers.size(); ++p) {
    const int rank = setup.peers[p];
    slotOf_[rank] = static_cast<int>(p);
    Peer& peer = peers_[p];
    peer.name = PeerName{rank, setup.identities[rank].hostName()};
    peer.state = std::make_unique<PeerState>();
    for (int c = 0; c < kChannels; ++c) {
      peer.sendRings[c] = std::make_unique<SendRing>(geometry);
      peer.recvRings[c] = std::make_unique<RecvRing>(geometry);
    }
  }
  std::vector<SocketLink> links;
  links.reserve(peers_.size() * kChannels * static_cast<size_t>(socketsPerPeer_));
  std::vector<PeerLinks> peerLinks;
  peerLinks.reserve(peers_.size());
  for (size_t p = 0; p < peers_.size(); ++p) {
    Peer& peer = peers_[p];
    PeerLinks links_of{peer.name, peer.state.get(), {}, {}};
    for (int c = 0; c < kChannels; ++c) {
      for (int i = 0; i < socketsPerPeer_; ++i) {
        SocketLink link;
        link.index = i;
        link.count = socketsPerPeer_;
        link.peer = p;
        link.send = peer.sendRings[c].get();
        link.recv = peer.recvRings[c].get();
        link.carriesControl = c == 0 && i == 0;
        link.nextSend = static_cast<uint64_t>(i);
        link.nextRecv = static_cast<uint64_t>(i);
        links_of.links.push_back(links.size());
        links.push_back(std::move(link));
      }
    }
    peerLinks.push_back(std::move(links_of));
  }
  std::vector<bootstrap::Socket> linkSockets;  // in the order of `links`
  linkSockets.reserve(links.size());
  for (std::vector<bootstrap::Socket>& ofPeer : sockets)
    for (bootstrap::Socket& socket : ofPeer) linkSockets.push_back(std::move(socket));
  progress_ =
      std::make_unique<TcpProgress>(std::move(links), std::move(linkSockets), std::move(peerLinks), wakeup_, rank_);
  // Channel c of peer p owns links p * kChannels * n + c * n ... + n - 1.
  size_t first = 0;
  for (Peer& peer : peers_) {
    for (int c = 0; c < kChannels; ++c) {
      std::vector<size_t> channelLinks;
      for (int i = 0; i < socketsPerPeer_; ++i) channelLinks.push_back(first++);
      const TcpChannel channel{peer.name, *peer.state, wakeup_, *progress_, std::move(channelLinks)};
      peer.send[c] = std::make_unique<TcpSendConnection>(channel, *peer.sendRings[c]);
      peer.recv[c] = std::make_unique<TcpRecvConnection>(channel, *peer.recvRings[c]);
    }
  }
  progress_->start();
}

TcpTransport::~TcpTransport() {
  if (progress_) progress_->stop(stopQuietMs_.load(std::memory_order_relaxed));
}

void TcpTransport::useIdleSleep(IdleSleep* engine) {
  if (progress_) progress_->useIdleSleep(engine);
}

void TcpTransport::takeBackDescriptors() {
  if (progress_) progress_->releaseClaims();
}

void TcpTransport::announceCollectiveStarted(const CollectiveCall& call) {
  std::lock_guard<std::mutex> lock(beatMutex_);
  beat_.call = call;
  beat_.collectivesStarted = call.number;
}

int64_t TcpTransport::collectivesStartedBy(int peer) const {
  if (slotOf_[peer] < 0) return -1;
  // From its last heartbeat: a lower bound, exact while it has work (it
  // beats every 50 ms then).
  return static_cast<int64_t>(at(peer).state->heard().collectivesStarted);
}

void TcpTransport::announceFailure(const std::string& sentence) {
  if (!progress_) return;
  // What is still posted belongs to the operations that failed: at destroy,
  // only this sentence needs to go out.
  stopQuietMs_.store(kFailedFlushMs, std::memory_order_relaxed);
  const size_t bytes = std::min(sentence.size(), kMaxFailureBytes);
  progress_->sendControlToAll(controlFrame(FrameKind::kFailure, sentence.data(), bytes));
}

void TcpTransport::publishProgress(int64_t nowMs, int waitingFor) {
  if (!progress_) return;
  std::string frame;
  {
    std::lock_guard<std::mutex> lock(beatMutex_);
    if (nowMs - lastBeatMs_ < kBeatEveryMs) return;
    lastBeatMs_ = nowMs;
    beat_.waitingFor = waitingFor;
    frame = controlFrame(FrameKind::kHeartbeat, &beat_, sizeof(beat_));
  }
  progress_->sendControlToAll(frame);
}

PeerProgress TcpTransport::progressOf(int peer) const {
  if (slotOf_[peer] < 0) return {};
  const PeerState::Heard heard = at(peer).state->heard();
  PeerProgress progress;
  progress.known = heard.beating;
  progress.heartbeatMs = heard.heardMs;
  progress.waitingFor = heard.waitingFor;
  return progress;
}

std::string TcpTransport::peerMemoryUnavailable() const {
  return "some peers are reached over TCP, whose memory this rank cannot read";
}

std::string TcpTransport::describe() const {
  return "TCP/" + links_.interfaceName + " (" + std::to_string(socketsPerPeer_) +
         (socketsPerPeer_ == 1 ? " socket)" : " sockets)");
}

}  // namespace loom::tcp

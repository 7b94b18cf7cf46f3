#include "transport/connections.h"

namespace loom {

Connections::Connections(int rank, const std::vector<RankIdentity>& identities, const TransportFilter& filter,
                         const TransportSettings& settings, bootstrap::RendezvousClient& rendezvous)
    : rank_(rank), byPeer_(identities.size(), nullptr) {
  kindOf_ = chooseTransports(identities, rank, filter);
  const std::vector<TransportKind>& kinds = transportKinds();
  for (size_t k = 0; k < kinds.size(); ++k) {
    std::vector<int> peers;
    for (size_t peer = 0; peer < identities.size(); ++peer)
      if (kindOf_[peer] == static_cast<int>(k)) peers.push_back(static_cast<int>(peer));
    // Every kind sets up on every rank, even with no peers here (excluded,
    // or not needed): its rounds are collective, so all ranks run the same.
    std::unique_ptr<Transport> transport = kinds[k].connect({rank, identities, peers, settings, rendezvous});
    if (peers.empty()) continue;  // it took part in the rounds, and carries nothing here
    for (int peer : peers) byPeer_[peer] = transport.get();
    transports_.push_back(std::move(transport));
  }
  Doorbell& engine = doorbell();
  for (auto& transport : transports_) transport->useDoorbell(&engine);
}

Connections::~Connections() {
  while (!transports_.empty()) transports_.pop_back();
}

const char* Connections::transportName(int peer) const {
  return kindOf_[peer] >= 0 ? transportKinds()[kindOf_[peer]].name : "self";
}

Doorbell& Connections::doorbell() {
  for (auto& transport : transports_)
    if (Doorbell* bell = transport->doorbell()) return *bell;
  return ownDoorbell_;
}

void Connections::announceCollectiveStarted(const CollectiveCall& call) {
  for (auto& transport : transports_) transport->announceCollectiveStarted(call);
}

void Connections::announceFailure(const std::string& sentence) {
  for (auto& transport : transports_) transport->announceFailure(sentence);
}

void Connections::publishProgress(int64_t nowMs, int waitingFor) {
  for (auto& transport : transports_) transport->publishProgress(nowMs, waitingFor);
}

const PeerMemory* Connections::peerMemory() const {
  return transports_.size() == 1 ? transports_.front()->peerMemory() : nullptr;
}

std::string Connections::peerMemoryUnavailable() const {
  if (transports_.size() > 1) return "the peers are reached over more than one transport";
  return transports_.empty() ? std::string() : transports_.front()->peerMemoryUnavailable();
}

}  // namespace loom

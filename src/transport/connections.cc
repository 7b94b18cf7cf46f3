#include "transport/connections.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>

#include "base/error.h"

namespace loom {

Connections::Connections(int rank, const std::vector<RankIdentity>& identities, const TransportFilter& filter,
                         const TransportSettings& settings, bootstrap::RendezvousClient& rendezvous)
    : rank_(rank), identities_(identities), filter_(filter), byPeer_(identities.size(), nullptr) {
  // Agreement first: ranks that disagree would otherwise choose different
  // transports for one pair and fail apart, each with its own story.
  checkSettingsAgree(settings, rendezvous);
  kindOf_ = chooseTransports(identities, rank, filter);
  const std::vector<TransportKind>& kinds = transportKinds();
  for (const auto& own : settings.kinds) slotShapeOfKind_.push_back(own->slotShape());
  for (size_t k = 0; k < kinds.size(); ++k) {
    std::vector<int> peers;
    for (size_t peer = 0; peer < identities.size(); ++peer)
      if (kindOf_[peer] == static_cast<int>(k)) peers.push_back(static_cast<int>(peer));
    // Every kind sets up on every rank, even with no peers here (excluded,
    // or not needed): its rounds are collective, so all ranks run the same.
    std::unique_ptr<Transport> transport =
        kinds[k].connect({rank, identities, peers, settings, *settings.kinds[k], rendezvous});
    // What its rounds learned of the links, every rank alike.
    if (transport->networkRate().any()) networkRate_ = transport->networkRate();
    if (peers.empty()) continue;  // it took part in the rounds, and carries nothing here
    for (int peer : peers) byPeer_[peer] = transport.get();
    transports_.push_back(std::move(transport));
  }
  makeIdleSleep();
}

Connections::Connections(int rank, int nranks, int kind, SlotShape shape, std::unique_ptr<Transport> transport)
    : rank_(rank),
      // Ranks of one process, which only `kind` connects (filter_): no
      // identities are kept, and slotBytesAmong finds `kind` for every pair.
      filter_{{transportKinds()[kind].name}, false},
      slotShapeOfKind_(transportKinds().size()),
      byPeer_(nranks, transport.get()),
      kindOf_(nranks, kind) {
  byPeer_[rank] = nullptr;
  kindOf_[rank] = -1;
  slotShapeOfKind_[kind] = shape;
  transports_.push_back(std::move(transport));
  makeIdleSleep();
}

void Connections::makeIdleSleep() {
  Doorbell* bell = nullptr;
  std::vector<Transport*> lenders;
  for (auto& transport : transports_) {
    if (bell == nullptr) bell = transport->doorbell();
    if (transport->progressBy() == Transport::ProgressBy::kOwnThread) lenders.push_back(transport.get());
  }
  idleSleep_ = std::make_unique<IdleSleep>(bell != nullptr ? *bell : ownDoorbell_, std::move(lenders));
  for (auto& transport : transports_) transport->useIdleSleep(idleSleep_.get());
}

bool Connections::anyProgressThread() const {
  for (const auto& transport : transports_)
    if (transport->progressBy() == Transport::ProgressBy::kOwnThread) return true;
  return false;
}

Connections::~Connections() {
  while (!transports_.empty()) transports_.pop_back();
}

// Algorithms cut messages by the smallest slot among a team's pairs, which
// every rank computes from its own settings: ranks of different hosts that
// never share a FIFO must still agree on every kind's slots, or one would
// send chunks of one size and the other read chunks of another.
// LOOM_TRANSPORTS too: a rank that forces TCP where its peer would use
// shared memory would wait on a connection the peer never makes; and the
// settings that choose algorithms (TransportSettings::agreedAbove), or
// ranks would run different schedules of one call.
void Connections::checkSettingsAgree(const TransportSettings& settings, bootstrap::RendezvousClient& rendezvous) {
  std::string allowed;  // the kinds it leaves, however it was spelt ("^shm", "tcp")
  for (const TransportKind& kind : transportKinds())
    if (filter_.allows(kind.name)) allowed += (allowed.empty() ? "" : ",") + std::string(kind.name);
  std::string mine = "LOOM_TRANSPORTS=" + allowed;
  for (const auto& own : settings.kinds) mine += " " + own->agreement();
  if (!settings.agreedAbove.empty()) mine += " " + settings.agreedAbove;
  const std::vector<std::string> all = rendezvous.allGather(mine);
  for (size_t peer = 0; peer < all.size(); ++peer)
    if (all[peer] != mine)
      fail(loomInvalidUsage, "ranks differ in settings every rank must share: " +
                                 differences(all[peer], static_cast<int>(peer), mine, rank_) +
                                 "; set these alike on every rank (or leave them unset)");
}

namespace {

// "KEY=VALUE KEY=VALUE ...", as a list of pairs in order.
std::vector<std::pair<std::string, std::string>> settingsOf(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> pairs;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    const size_t equals = item.find('=');
    if (!item.empty())
      pairs.emplace_back(item.substr(0, equals), equals == std::string::npos ? "" : item.substr(equals + 1));
    at = end + 1;
  }
  return pairs;
}

}  // namespace

// The settings whose values differ, "LOOM_ALGO=tree on rank 0 against
// LOOM_ALGO=auto on rank 2"; what only one side has counts as a difference.
std::string Connections::differences(const std::string& theirs, int peer, const std::string& mine, int rank) {
  const auto theirPairs = settingsOf(theirs), myPairs = settingsOf(mine);
  auto find = [](const std::vector<std::pair<std::string, std::string>>& pairs, const std::string& key) {
    for (const auto& pair : pairs)
      if (pair.first == key) return &pair.second;
    return static_cast<const std::string*>(nullptr);
  };
  std::string text;
  auto add = [&](const std::string& key, const std::string* a, const std::string* b) {
    if (a != nullptr && b != nullptr && *a == *b) return;
    if (!text.empty()) text += ", ";
    text += key + (a ? "=" + *a : " unknown") + " on rank " + std::to_string(peer) + " against " + key +
            (b ? "=" + *b : " unknown") + " on rank " + std::to_string(rank);
  };
  for (const auto& pair : theirPairs) add(pair.first, &pair.second, find(myPairs, pair.first));
  for (const auto& pair : myPairs)
    if (find(theirPairs, pair.first) == nullptr) add(pair.first, nullptr, &pair.second);
  if (text.empty())  // the same pairs in another order: not from this version
    return "'" + theirs.substr(0, 200) + "' on rank " + std::to_string(peer) + " against '" + mine.substr(0, 200) +
           "' on rank " + std::to_string(rank);
  return text.substr(0, 600);
}

size_t Connections::slotBytesAmong(const std::vector<int>& ranks) const {
  // No pair can do better than the smallest slot of any allowed kind: once
  // a pair has it, the rest need not be looked at (within a host and
  // between hosts alike, the first pair usually decides).
  size_t floor = SIZE_MAX;
  const std::vector<TransportKind>& kinds = transportKinds();
  for (size_t k = 0; k < kinds.size(); ++k)
    if (filter_.allows(kinds[k].name)) floor = std::min(floor, slotShapeOfKind_[k].bytes);
  if (identities_.empty()) return floor;  // one kind carries every pair
  size_t smallest = SIZE_MAX;
  for (size_t i = 0; i < ranks.size() && smallest > floor; ++i) {
    for (size_t j = i + 1; j < ranks.size() && smallest > floor; ++j) {
      // A pair no kind connects failed its own ranks' init; none is here.
      const int kind = chooseKind(identities_[ranks[i]], identities_[ranks[j]], filter_);
      if (kind >= 0) smallest = std::min(smallest, slotShapeOfKind_[kind].bytes);
    }
  }
  return smallest == SIZE_MAX ? floor : smallest;
}

SlotShape Connections::slotShapeBetween(int a, int b) const {
  if (identities_.empty()) {  // one kind carries every pair
    const std::vector<TransportKind>& kinds = transportKinds();
    for (size_t k = 0; k < kinds.size(); ++k)
      if (filter_.allows(kinds[k].name)) return slotShapeOfKind_[k];
    return SlotShape{};
  }
  const int kind = chooseKind(identities_[a], identities_[b], filter_);
  return kind >= 0 ? slotShapeOfKind_[kind] : SlotShape{};
}

const char* Connections::transportName(int peer) const {
  return kindOf_[peer] >= 0 ? transportKinds()[kindOf_[peer]].name : "self";
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

PeerMemory* Connections::peerMemory() const {
  return transports_.size() == 1 ? transports_.front()->peerMemory() : nullptr;
}

std::string Connections::peerMemoryUnavailable() const {
  if (transports_.size() > 1) return "the peers are reached over more than one transport";
  return transports_.empty() ? std::string() : transports_.front()->peerMemoryUnavailable();
}

}  // namespace loom

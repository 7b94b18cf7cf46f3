#include "transport/registry.h"

#include <cstring>

#include "base/error.h"
#include "transport/mem/mem_settings.h"
#include "transport/mem/mem_transport.h"
#include "transport/shm/peer_windows.h"
#include "transport/shm/shareable_memory.h"
#include "transport/shm/shm_settings.h"
#include "transport/shm/shm_transport.h"
#include "transport/tcp/tcp_settings.h"
#include "transport/tcp/tcp_transport.h"

namespace loom {
namespace {

std::string knownKinds() {
  std::string names;
  for (const TransportKind& kind : transportKinds()) names += std::string(names.empty() ? "" : ", ") + kind.name;
  return names;
}

std::string describe(const TransportFilter& filter) {
  if (filter.names.empty()) return "all of them allowed";
  std::string names;
  for (const std::string& name : filter.names) names += (names.empty() ? "" : ",") + name;
  return "LOOM_TRANSPORTS=" + std::string(filter.exclude ? "^" : "") + names;
}

}  // namespace

const std::vector<TransportKind>& transportKinds() {
  static const std::vector<TransportKind> kinds = {
      {"shm", shm::canConnect, shm::connect, shm::readSettings, shm::makeRegionKey, shm::openRegion,
       shm::allocateShareable, shm::freeShareable},
      {"tcp", tcp::canConnect, tcp::connect, tcp::readSettings, nullptr, nullptr, nullptr, nullptr},
      {"mem", mem::canConnect, mem::connect, mem::readSettings, mem::makeRegionKey, mem::openRegion, nullptr, nullptr,
       true},
  };
  return kinds;
}

KindSettingsList readKindSettings() {
  KindSettingsList settings;
  for (const TransportKind& kind : transportKinds()) settings.push_back(kind.readSettings());
  return settings;
}

RegionOffer offerRegion(const char* api, uint64_t window, const void* base, size_t bytes) {
  RegionOffer offer;
  offer.window = window;
  offer.base = reinterpret_cast<uintptr_t>(base);
  offer.bytes = bytes;
  const std::vector<TransportKind>& kinds = transportKinds();
  for (size_t k = 0; k < kinds.size(); ++k) {
    if (kinds[k].makeRegionKey == nullptr) continue;
    RegionKey& key = offer.keys.emplace_back();
    key.kind = static_cast<uint32_t>(k);
    kinds[k].makeRegionKey(api, window, base, bytes, key.bytes);
  }
  return offer;
}

std::unique_ptr<PeerRegion> openRegion(int kind, const RegionOffer& offer, bool own, std::string* why) {
  const std::vector<TransportKind>& kinds = transportKinds();
  if (kind < 0 || static_cast<size_t>(kind) >= kinds.size() || kinds[kind].openRegion == nullptr) {
    *why = "its transport cannot register memory";
    return nullptr;
  }
  const RegionKey* key = offer.keyOf(kind);
  if (key == nullptr) {
    *why = std::string("its offer has no ") + kinds[kind].name + " key";
    return nullptr;
  }
  return kinds[kind].openRegion(key->bytes, own, why);
}

namespace {

const TransportKind& allocatingKind() {
  for (const TransportKind& kind : transportKinds())
    if (kind.allocateRegistrable != nullptr) return kind;
  fail(loomUnsupported,
       "loomMemAlloc: no transport of this Loom allocates registrable memory (it has: " + knownKinds() + ")");
}

}  // namespace

void* allocateRegistrable(size_t bytes) {
  return allocatingKind().allocateRegistrable(bytes);
}

void freeRegistrable(void* pointer) {
  allocatingKind().freeRegistrable(pointer);
}

int ownRegionKind() {
  const std::vector<TransportKind>& kinds = transportKinds();
  for (size_t k = 0; k < kinds.size(); ++k)
    if (kinds[k].openRegion != nullptr) return static_cast<int>(k);
  return -1;
}

bool kindRegistersMemory(int kind) {
  const std::vector<TransportKind>& kinds = transportKinds();
  return kind >= 0 && static_cast<size_t>(kind) < kinds.size() && kinds[kind].openRegion != nullptr;
}

bool TransportFilter::allows(const char* kind) const {
  bool listed = false;
  for (const std::string& name : names) listed = listed || name == kind;
  if (listed) return !exclude;
  if (!names.empty() && !exclude) return false;
  for (const TransportKind& known : transportKinds())
    if (std::strcmp(known.name, kind) == 0) return !known.onlyWhenNamed;
  return false;
}

TransportFilter parseTransportFilter(const std::string& text, const char* variable) {
  TransportFilter filter;
  std::string list = text;
  if (!list.empty() && list[0] == '^') {
    filter.exclude = true;
    list.erase(0, 1);
  }
  size_t at = 0;
  while (!text.empty() && at <= list.size()) {
    size_t comma = list.find(',', at);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(at, comma - at);
    bool known = false;
    for (const TransportKind& kind : transportKinds()) known = known || name == kind.name;
    if (!known)
      fail(loomInvalidArgument, std::string(variable) + "='" + text + "' names transport '" + name +
                                    "', which this Loom does not have (it has: " + knownKinds() + ")");
    filter.names.push_back(name);
    at = comma + 1;
  }
  return filter;
}

int chooseKind(const RankIdentity& a, const RankIdentity& b, const TransportFilter& filter) {
  const std::vector<TransportKind>& kinds = transportKinds();
  // A kind used only when named is named to be used: it goes first.
  for (bool named : {true, false})
    for (size_t k = 0; k < kinds.size(); ++k)
      if (kinds[k].onlyWhenNamed == named && filter.allows(kinds[k].name) && kinds[k].canConnect(a, b))
        return static_cast<int>(k);
  return -1;
}

std::vector<int> chooseTransports(const std::vector<RankIdentity>& identities, int rank,
                                  const TransportFilter& filter) {
  std::vector<int> chosen(identities.size(), -1);
  for (size_t peer = 0; peer < identities.size(); ++peer) {
    if (static_cast<int>(peer) == rank) continue;
    chosen[peer] = chooseKind(identities[rank], identities[peer], filter);
    if (chosen[peer] < 0) {
      std::string why = identities[rank].host == identities[peer].host
                            ? "both run on host " + identities[rank].hostName()
                            : "rank " + std::to_string(peer) + " runs on host " + identities[peer].hostName() +
                                  " and rank " + std::to_string(rank) + " on " + identities[rank].hostName();
      fail(loomUnsupported,
           "no transport can connect rank " + std::to_string(rank) + " and rank " + std::to_string(peer) + " (" + why +
               "): this Loom has " + knownKinds() +
               " (shm for ranks of one host, tcp for any two, mem for ranks of one process when named), " +
               describe(filter));
    }
  }
  return chosen;
}

}  // namespace loom

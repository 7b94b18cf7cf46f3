#include "transport/regions.h"

#include <cstring>
#include <string>

#include "base/error.h"

namespace loom {
namespace {

// An offer's bytes: window, base, bytes and the number of keys, then the keys.
struct OfferHeader {
  uint64_t window;
  uint64_t base;
  uint64_t bytes;
  uint64_t keys;
};

}  // namespace

const RegionKey* RegionOffer::keyOf(int kind) const {
  for (const RegionKey& key : keys)
    if (static_cast<int>(key.kind) == kind) return &key;
  return nullptr;
}

std::vector<unsigned char> RegionOffer::encode() const {
  const OfferHeader header{window, base, bytes, keys.size()};
  std::vector<unsigned char> out(sizeof(header) + keys.size() * sizeof(RegionKey));
  std::memcpy(out.data(), &header, sizeof(header));
  if (!keys.empty()) std::memcpy(out.data() + sizeof(header), keys.data(), keys.size() * sizeof(RegionKey));
  return out;
}

RegionOffer RegionOffer::decode(const unsigned char* data, size_t size, size_t kinds, int sender) {
  OfferHeader header{};
  if (size >= sizeof(header)) std::memcpy(&header, data, sizeof(header));
  if (size < sizeof(header) || header.keys > kinds || size != sizeof(header) + header.keys * sizeof(RegionKey))
    fail(loomRemoteError, "loomCommRegister: rank " + std::to_string(sender) +
                              " sent a registration offer that is not one this Loom reads (" + std::to_string(size) +
                              " bytes; is every rank running the same Loom?)");
  RegionOffer offer;
  offer.window = header.window;
  offer.base = header.base;
  offer.bytes = header.bytes;
  offer.keys.resize(header.keys);
  if (header.keys > 0) std::memcpy(offer.keys.data(), data + sizeof(header), header.keys * sizeof(RegionKey));
  return offer;
}

void RegisteredRegions::add(uint64_t window, std::vector<std::unique_ptr<PeerRegion>> byRank) {
  windows_.push_back(Window{window, std::move(byRank)});
  next_ = window + 1;
}

bool RegisteredRegions::anyMapped() const {
  for (const Window& w : windows_)
    if (!w.byRank.empty()) return true;
  return false;
}

bool RegisteredRegions::contains(uint64_t window) const {
  for (const Window& w : windows_)
    if (w.number == window) return true;
  return false;
}

void RegisteredRegions::remove(uint64_t window) {
  for (auto it = windows_.begin(); it != windows_.end(); ++it) {
    if (it->number != window) continue;
    windows_.erase(it);
    return;
  }
}

PeerRegion* RegisteredRegions::regionOf(int rank, uint64_t address, size_t bytes) const {
  for (const Window& window : windows_)
    if (!window.byRank.empty() && window.byRank[rank]->contains(address, bytes)) return window.byRank[rank].get();
  return nullptr;
}

void PeerRegion::postRead(uint64_t remote, void* local, size_t bytes) {
  const char* mapped = translate(remote, bytes);
  if (mapped == nullptr)
    fail(loomInternalError, "a registered buffer was read outside its range, or by a kind that cannot map it");
  std::memcpy(local, mapped, bytes);
}

void PeerRegion::postWrite(uint64_t remote, const void* local, size_t bytes) {
  char* mapped = translate(remote, bytes);
  if (mapped == nullptr)
    fail(loomInternalError, "a registered buffer was written outside its range, or by a kind that cannot map it");
  std::memcpy(mapped, local, bytes);
}

char* RegisteredRegions::translate(int rank, uint64_t address, size_t bytes) const {
  for (const Window& window : windows_)
    if (!window.byRank.empty())
      if (char* local = window.byRank[rank]->translate(address, bytes)) return local;
  return nullptr;
}

}  // namespace loom

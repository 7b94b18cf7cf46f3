#include "transport/regions.h"

namespace loom {

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

char* RegisteredRegions::translate(int rank, uint64_t address, size_t bytes) const {
  for (const Window& window : windows_)
    if (!window.byRank.empty())
      if (char* local = window.byRank[rank]->translate(address, bytes)) return local;
  return nullptr;
}

}  // namespace loom

#include "collectives/p2p_inbox.h"

namespace loom {

void PointToPointInbox::stopWaiting(int tag) {
  auto at = waiting_.find(tag);
  if (at != waiting_.end() && --at->second == 0) waiting_.erase(at);
}

PointToPointInbox::Stashed* PointToPointInbox::oldest(int tag) {
  auto at = stash_.find(tag);
  return at == stash_.end() || at->second.empty() ? nullptr : &at->second.front();
}

void PointToPointInbox::dropOldest(int tag) {
  auto at = stash_.find(tag);
  if (at == stash_.end()) return;
  at->second.pop_front();
  if (at->second.empty()) stash_.erase(at);
}

PointToPointInbox::Stashed& PointToPointInbox::stash(const MessageLabel& label) {
  std::deque<Stashed>& queue = stash_[label.root];
  queue.push_back(Stashed{label, {}});
  return queue.back();
}

uint64_t PointToPointInbox::delivered(int tag) const {
  auto at = delivered_.find(tag);
  return at == delivered_.end() ? 0 : at->second;
}

void PostedRecvs::posted(uint64_t sequence, int peer, int tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_[{peer, tag}].insert(sequence);
  if (peer == kAnySource) anySource_.fetch_add(1, std::memory_order_release);
}

void PostedRecvs::ended(uint64_t sequence, int peer, int tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto at = pending_.find({peer, tag});
  if (at == pending_.end() || at->second.erase(sequence) == 0) return;
  if (at->second.empty()) pending_.erase(at);
  if (peer == kAnySource) anySource_.fetch_sub(1, std::memory_order_release);
}

bool PostedRecvs::firstFor(uint64_t sequence, int peer, int tag) const {
  if (peer != kAnySource && anySource_.load(std::memory_order_acquire) == 0) return true;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const int from : {peer, kAnySource}) {
    auto at = pending_.find({from, tag});
    if (at != pending_.end() && *at->second.begin() < sequence) return false;
  }
  return true;
}

}  // namespace loom

#include "collectives/p2p_inbox.h"

#include <algorithm>

namespace loom {

void PointToPointInbox::stopWaiting(int tag) {
  auto at = waiting_.find(tag);
  if (at == waiting_.end() || at->second == 0) return;
  if (--at->second == 0 && tag != 0) waiting_.erase(at);
}

// Polled by every waiting Recv: walks the running Recvs' tags (a few),
// not the stash, which may hold many messages nobody has asked for yet.
bool PointToPointInbox::stashedForAWaitingRecv() const {
  if (stash_.empty()) return false;
  for (const auto& [tag, running] : waiting_) {
    if (running == 0) continue;
    auto at = stash_.find(tag);
    if (at != stash_.end() && !at->second.empty() && at->second.front().complete) return true;
  }
  return false;
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

void PostedRecvs::posted(uint64_t sequence, int peer, int tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  pending_[{peer, tag}].push_back(sequence);
  if (peer == kAnySource) anySource_.fetch_add(1, std::memory_order_release);
}

void PostedRecvs::ended(uint64_t sequence, int peer, int tag) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto at = pending_.find({peer, tag});
  if (at == pending_.end()) return;
  std::deque<uint64_t>& queue = at->second;
  if (!queue.empty() && queue.front() == sequence) {
    queue.pop_front();  // the usual case: the lane's head ended
  } else {
    auto it = std::find(queue.begin(), queue.end(), sequence);
    if (it == queue.end()) return;
    queue.erase(it);
  }
  if (queue.empty() && tag != 0) pending_.erase(at);
  if (peer == kAnySource) anySource_.fetch_sub(1, std::memory_order_release);
}

size_t PostedRecvs::keysHeld() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.size();
}

size_t PointToPointInboxes::tagsHeld() const {
  size_t held = posted_.keysHeld();
  for (const PointToPointInbox& inbox : inboxes_) held += inbox.tagsHeld();
  return held;
}

bool PostedRecvs::firstFor(uint64_t sequence, int peer, int tag) const {
  if (peer != kAnySource && anySource_.load(std::memory_order_acquire) == 0) return true;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const int from : {peer, kAnySource}) {
    auto at = pending_.find({from, tag});
    if (at != pending_.end() && !at->second.empty() && at->second.front() < sequence) return false;
  }
  return true;
}

}  // namespace loom

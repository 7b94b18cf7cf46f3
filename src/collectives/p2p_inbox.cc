#include "collectives/p2p_inbox.h"

#include <string>

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

std::string PointToPointInbox::describeStash() const {
  std::string text;
  for (const auto& [tag, queue] : stash_) {
    if (!text.empty()) text += ", ";
    text += std::to_string(queue.size()) + (queue.size() == 1 ? " message" : " messages") + " with tag " +
            std::to_string(tag);
  }
  return text;
}

}  // namespace loom

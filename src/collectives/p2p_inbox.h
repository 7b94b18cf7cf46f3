// Tag matching for point-to-point messages. Messages from a peer arrive on
// one FIFO in the order that peer sent them, each labeled with its tag and
// its number among the pair's messages of that tag. A Recv takes the next
// message of its own tag: from the inbox's stash if one arrived earlier,
// otherwise from the FIFO. A message at the head of the FIFO whose tag no
// running Recv waits for is moved into the stash (copied out of its slots),
// so that the FIFO keeps moving and Recvs of different tags complete in
// whatever order the application posted them, as MPI's tag matching
// allows; messages of one tag between a pair still match in posting order.
// The engine drives every operation of a communicator from one thread at a
// time, so an inbox needs no lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "transport/connection.h"
#include "transport/message_label.h"

namespace loom {

// The waitable kept in `kept` for `tag`, made by `make` the first time.
template <typename Make>
Waitable& keptFor(std::map<int, std::unique_ptr<Waitable>>& kept, int tag, Make& make) {
  std::unique_ptr<Waitable>& slot = kept[tag];
  if (!slot) slot = make();
  return *slot;
}

class PointToPointInbox {
 public:
  // A whole message taken off the FIFO before any Recv asked for it.
  struct Stashed {
    MessageLabel label;
    std::vector<char> bytes;
    bool complete = false;  // every slot of it has been copied
  };

  // Recvs of `tag` that are running now: a message of that tag found at
  // the head of the FIFO is theirs to read in place, not to stash.
  void startWaiting(int tag) { ++waiting_[tag]; }
  void stopWaiting(int tag);
  bool someoneWaits(int tag) const {
    auto at = waiting_.find(tag);
    return at != waiting_.end() && at->second > 0;
  }

  // The FIFO's head message is being read by one Recv, slot by slot: no
  // other may look at the FIFO until it is done.
  bool busy() const { return busy_; }
  void setBusy(bool busy) { busy_ = busy; }

  // The oldest stashed message of `tag`, or null (it may still be coming in:
  // see `complete`).
  Stashed* oldest(int tag);
  void dropOldest(int tag);
  Stashed& stash(const MessageLabel& label);
  // Messages of `tag` handed to Recvs so far: the next one's label must
  // carry this plus one (a message number counts its pair's messages of
  // its tag, in sending order).
  uint64_t delivered(int tag) const;
  void deliver(int tag) { ++delivered_[tag]; }

  // What a Recv of `tag` from this inbox's sender parks on, kept here because the engine may still
  // touch a waitable after the operation parked on it has failed (made by
  // `make` the first time).
  template <typename Make>
  Waitable& arrivals(int tag, Make&& make) {
    return keptFor(arrivals_, tag, make);
  }

 private:
  std::map<int, std::unique_ptr<Waitable>> arrivals_;
  std::map<int, int> waiting_;
  std::map<int, std::deque<Stashed>> stash_;
  std::map<int, uint64_t> delivered_;
  bool busy_ = false;
};

// The Recvs posted and not yet ended, by sequence, so that a message goes
// to the earliest posted Recv that matches it, as in MPI: a Recv from any
// source and a Recv that names the sender compete for the sender's
// messages of their tag. A Recv registers when posted (on the caller's
// thread) and leaves when it ends (on the engine's), hence the lock.
class PostedRecvs {
 public:
  static constexpr int kAnySource = -1;
  void posted(uint64_t sequence, int peer, int tag);
  void ended(uint64_t sequence, int peer, int tag);
  // Whether no Recv posted before `sequence` could take `peer`'s next
  // message of `tag`.
  bool firstFor(uint64_t sequence, int peer, int tag) const;

 private:
  mutable std::mutex mutex_;
  // By (peer or kAnySource, tag), in posting order: the Recvs of one such
  // key share a lane, so they end in that order too (a failure ends them
  // all, in any order).
  std::map<std::pair<int, int>, std::deque<uint64_t>> pending_;
  // Recvs from any source pending: while there are none, a Recv's lane
  // (posting order per peer and tag) is all the order there is.
  std::atomic<int> anySource_{0};
};

class PointToPointInboxes {
 public:
  void resize(int nranks) { inboxes_.resize(static_cast<size_t>(nranks)); }
  PointToPointInbox& from(int rank) { return inboxes_[static_cast<size_t>(rank)]; }
  PostedRecvs& posted() { return posted_; }
  // What Recvs from any source park on, per tag (as
  // PointToPointInbox::arrivals).
  template <typename Make>
  Waitable& anySourceArrivals(int tag, Make&& make) {
    return keptFor(anySource_, tag, make);
  }

 private:
  std::vector<PointToPointInbox> inboxes_;
  PostedRecvs posted_;
  std::map<int, std::unique_ptr<Waitable>> anySource_;
};

}  // namespace loom

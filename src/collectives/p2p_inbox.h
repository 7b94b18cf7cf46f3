// Tag matching for point-to-point messages. Messages from a peer arrive on
// one FIFO in the order that peer sent them, each labeled with its tag and
// its number among all the pair's messages. A Recv takes the next message
// of its own tag: from the inbox's stash if one arrived earlier, otherwise
// from the FIFO. A message at the head of the FIFO whose tag no running
// Recv waits for is moved into the stash (copied out of its slots), so
// that the FIFO keeps moving and Recvs of different tags complete in
// whatever order the application posted them, as MPI's tag matching
// allows; messages of one tag between a pair still match in posting order.
// Nothing is kept per tag once its Recvs and stashed messages are gone, so
// a job that uses a new tag for every message holds no more state than one
// that uses one tag. The engine drives every operation of a communicator
// from one thread at a time, so an inbox needs no lock.
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
  // Whether a complete stashed message waits for a Recv that runs now.
  bool stashedForAWaitingRecv() const;
  // Messages taken off the FIFO so far (read in place or stashed): the
  // head's label must carry this plus one, as the sender numbers all its
  // messages to this rank, of every tag, in sending order.
  uint64_t nextOffFifo() const { return takenOffFifo_ + 1; }
  void tookOffFifo() { ++takenOffFifo_; }

  // What a Recv from this inbox's sender parks on, kept because the engine
  // may still touch a waitable after the operation parked on it has failed
  // (made by `make` the first time).
  template <typename Make>
  Waitable& arrivals(Make&& make) {
    if (!arrivals_) arrivals_ = make();
    return *arrivals_;
  }

  // Tags with state here (Recvs waiting, messages stashed): for tests.
  size_t tagsHeld() const { return waiting_.size() + stash_.size(); }

 private:
  std::unique_ptr<Waitable> arrivals_;
  std::map<int, int> waiting_;  // tag 0's entry stays once made: no allocation per plain Recv
  std::map<int, std::deque<Stashed>> stash_;
  uint64_t takenOffFifo_ = 0;
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
  // Keys with Recvs pending: for tests.
  size_t keysHeld() const;

 private:
  mutable std::mutex mutex_;
  // By (peer or kAnySource, tag), in posting order: the Recvs of one such
  // key share a lane, so they end in that order too (a failure ends them
  // all, in any order). A key of tag 0 stays once made (no allocation per
  // plain Recv); another goes with its last Recv.
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
  // What Recvs from any source park on (as PointToPointInbox::arrivals).
  template <typename Make>
  Waitable& anySourceArrivals(Make&& make) {
    if (!anySource_) anySource_ = make();
    return *anySource_;
  }
  // Tags with state in any inbox, and keys of pending Recvs: for tests.
  size_t tagsHeld() const;

 private:
  std::vector<PointToPointInbox> inboxes_;
  PostedRecvs posted_;
  std::unique_ptr<Waitable> anySource_;
};

}  // namespace loom

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

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

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
  bool someoneWaits(int tag) const { return waiting_.count(tag) != 0; }

  // The FIFO's head message is being read by one Recv, slot by slot: no
  // other may look at the FIFO until it is done.
  bool busy() const { return busy_; }
  void setBusy(bool busy) { busy_ = busy; }

  // The oldest stashed message of `tag`, or null (it may still be coming in:
  // see `complete`).
  Stashed* oldest(int tag);
  void dropOldest(int tag);
  Stashed& stash(const MessageLabel& label);
  // What the stash holds, for a wait that timed out: "2 messages with tag
  // 7" or "" when empty.
  std::string describeStash() const;

 private:
  std::map<int, int> waiting_;
  std::map<int, std::deque<Stashed>> stash_;
  bool busy_ = false;
};

// One inbox per communicator rank, owned by the communicator.
class PointToPointInboxes {
 public:
  void resize(int nranks) { inboxes_.resize(static_cast<size_t>(nranks)); }
  PointToPointInbox& from(int rank) { return inboxes_[static_cast<size_t>(rank)]; }

 private:
  std::vector<PointToPointInbox> inboxes_;
};

}  // namespace loom

// Recv: tag matching over the pair's FIFO (p2p_inbox.h). A Recv names its
// sender, or takes the first message of its tag from any sender; either
// way it takes a message only when no Recv posted before it could take
// that message (PostedRecvs), so messages go to Recvs in posting order, as
// MPI matches them. Its own tag's message at the head of a FIFO it reads in
// place; a message of a tag no running Recv waits for it moves into the
// stash, so that no Recv waits behind another tag's message.
#include <algorithm>
#include <coroutine>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "base/dtype_size.h"
#include "base/error.h"
#include "collectives/collectives.h"
#include "collectives/p2p_inbox.h"
#include "collectives/primitives.h"

namespace loom {
namespace {

// A rank a Recv may take its message from.
struct Sender {
  int rank;
  RecvConnection* from;
  PointToPointInbox* inbox;
};

// Gives the engine a turn, parked on `on`: resumed once it is ready (at
// once when it is now). A Recv waiting for another to take the head
// message must let that one run.
struct TurnOn {
  Waitable& on;
  const WaitContext& wait;
  bool await_ready() { return false; }
  void await_suspend(std::coroutine_handle<> self) { wait.park(self, on); }
  void await_resume() {}
};

// What a Recv waits on: its senders' FIFOs, and their inboxes, which the
// other Recvs change. One per sender (and one for Recvs from any source),
// whatever the tag, so that no state stays behind per tag: it is ready when
// a FIFO has a message no Recv is reading, or a stash holds a complete
// message some running Recv waits for (its message may reach a stash while
// it waits, another Recv having set it aside, with nothing more to come on
// the FIFO). Ready may be early (the message is another Recv's): a Recv
// then looks, and parks again.
class Arrivals final : public Waitable {
 public:
  Arrivals(std::vector<Sender> senders, bool anySource) : senders_(std::move(senders)), anySource_(anySource) {}
  // -1 for a Recv from any source: the engine's sentences say "any rank".
  int peer() const override { return anySource_ ? -1 : senders_[0].rank; }
  size_t slotBytes() const override { return senders_[0].from->slotBytes(); }
  bool ready() override {
    for (const Sender& s : senders_) {
      if (s.inbox->stashedForAWaitingRecv()) return true;
      if (!s.inbox->busy() && s.from->ready()) return true;
    }
    return false;
  }
  // A Recv from any source ends only once no sender is left who could
  // still send (a rank that left after its part is no reason to fail).
  void checkPeer(const WaitContext& ctx) override {
    if (!anySource_) return senders_[0].from->checkPeer(ctx);
    std::exception_ptr first;
    for (const Sender& s : senders_) {
      try {
        s.from->checkPeer(ctx);
        return;  // this one may still send
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    std::rethrow_exception(first);
  }
  const char* peerMustDo() const override { return senders_[0].from->peerMustDo(); }
  const std::vector<Sender>& senders() const { return senders_; }
  void watch(bool on) override {
    for (const Sender& s : senders_) s.from->watch(on);
  }
  // One descriptor only where there is one sender: the engine sleeps on
  // its doorbell otherwise, which every transport rings for a watched wait.
  int pollFd() override { return senders_.size() == 1 ? senders_[0].from->pollFd() : -1; }
  void pollReady() override {
    if (senders_.size() == 1) senders_[0].from->pollReady();
  }

 private:
  const std::vector<Sender> senders_;
  bool anySource_;
};

// For as long as a Recv runs, its senders' inboxes know it waits for its
// tag (and forget it when the Recv ends, failed or not).
class WaitingFor {
 public:
  WaitingFor(const std::vector<Sender>& senders, int tag) : senders_(senders), tag_(tag) {
    for (const Sender& s : senders_) s.inbox->startWaiting(tag_);
  }
  ~WaitingFor() {
    for (const Sender& s : senders_) s.inbox->stopWaiting(tag_);
  }
  WaitingFor(const WaitingFor&) = delete;
  WaitingFor& operator=(const WaitingFor&) = delete;

 private:
  const std::vector<Sender>& senders_;
  int tag_;
};

// While one Recv reads the head message slot by slot, the others keep off
// the FIFO.
class ReadingHead {
 public:
  explicit ReadingHead(PointToPointInbox& inbox) : inbox_(inbox) { inbox_.setBusy(true); }
  ~ReadingHead() { inbox_.setBusy(false); }
  ReadingHead(const ReadingHead&) = delete;
  ReadingHead& operator=(const ReadingHead&) = delete;

 private:
  PointToPointInbox& inbox_;
};

// The message at the head of a sender's FIFO must be the next of the
// pair's stream; taking it off moves the stream on.
void checkStreamPosition(PointToPointInbox& inbox, const MessageLabel& head, int sender, const WaitContext& wait) {
  if (head.number != inbox.nextOffFifo())
    fail(loomInternalError, wait.describe() + ": the point-to-point stream from rank " + std::to_string(sender) +
                                " is out of step: its next message is labeled " + head.describe() +
                                ", this rank expects message #" + std::to_string(inbox.nextOffFifo()) + " from it");
  inbox.tookOffFifo();
}

// Copies the message at the head of `from`, every slot of it, into the
// inbox's stash. Its label comes off the wire: it is checked before its
// size is trusted, and every later slot must carry the same label.
Task<> stashHead(PointToPointInbox& inbox, RecvConnection& from, int sender, const WaitContext& wait) {
  ReadingHead reading(inbox);
  const MessageLabel label = from.labelOf(from.tryAcquire());
  const size_t elementSize =
      label.kind == OperationKind::kSend ? dtypeSize(static_cast<loomDataType_t>(label.dtype)) : 0;
  if (elementSize == 0 || label.root < 0)
    fail(loomRemoteError, wait.describe() + ": rank " + std::to_string(sender) +
                              " sent a point-to-point message labeled " + label.describe() +
                              ", which no Send writes (the two ranks run different builds of Loom, or the bytes "
                              "were corrupted)");
  checkStreamPosition(inbox, label, sender, wait);
  PointToPointInbox::Stashed& stashed = inbox.stash(label);
  const size_t chunk = std::max<size_t>(1, from.slotBytes() / elementSize);
  size_t start = 0;
  do {
    co_await TurnOn{from, wait};
    const char* slot = static_cast<const char*>(from.tryAcquire());
    const MessageLabel next = from.labelOf(slot);
    if (!(next == label))
      fail(loomRemoteError, wait.describe() + ": rank " + std::to_string(sender) + " cut its " + label.describe() +
                                " short: the next slot is labeled " + next.describe());
    const size_t bytes = std::min<uint64_t>(chunk, label.count - start) * elementSize;
    const size_t arrived = from.acquiredBytes();
    if (arrived != RecvConnection::kBytesUnknown && arrived != bytes) failDataBytes(arrived, bytes, sender, wait);
    stashed.bytes.insert(stashed.bytes.end(), slot, slot + bytes);
    from.release();
  } while ((start += chunk) < label.count);
  stashed.complete = true;
}

// What the Recv waits on, made the first time its sender (or any source)
// is asked for, and kept: a Recv allocates nothing for it.
Arrivals& arrivalsOf(const Team& team, const CollectiveArgs& args) {
  const bool anySource = args.root == PostedRecvs::kAnySource;
  auto make = [&] {
    std::vector<Sender> senders;
    for (int index = 0; index < team.nranks; ++index) {
      if (index == team.rank || (!anySource && index != args.root)) continue;
      const int rank = team.peerOf(index);
      senders.push_back({rank, &team.recvFrom(index, Channel::kPointToPoint), &team.inboxes->from(rank)});
    }
    return std::make_unique<Arrivals>(std::move(senders), anySource);
  };
  Waitable& kept =
      anySource ? team.inboxes->anySourceArrivals(make) : team.inboxes->from(team.peerOf(args.root)).arrivals(make);
  return static_cast<Arrivals&>(kept);
}

// The Recv takes `message` (its label as sent) from `s`: the label it must
// carry, and the sender for a Recv from any source.
void matched(const Sender& s, const MessageLabel& message, const CollectiveArgs& args, const WaitContext& wait) {
  wait.label = MessageLabel::pointToPoint(message.number, args.count, args.dtype, args.tag);
  if (args.source != nullptr) *args.source = s.rank;
}

}  // namespace

Task<> pointToPointRecv(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  const PostedRecvs& posted = team.inboxes->posted();
  Arrivals& arrivals = arrivalsOf(team, args);
  const std::vector<Sender>& senders = arrivals.senders();
  WaitingFor waiting(senders, args.tag);
  char* out = static_cast<char*>(args.recvbuf);
  const Sender* chosen = nullptr;
  while (chosen == nullptr) {
    bool stashed = false;
    for (const Sender& s : senders) {
      if (!posted.firstFor(wait.sequence, s.rank, args.tag)) continue;  // an earlier Recv takes it
      // A message of this tag that came before any Recv asked is the next one.
      if (PointToPointInbox::Stashed* early = s.inbox->oldest(args.tag); early != nullptr && early->complete) {
        matched(s, early->label, args, wait);
        if (!(early->label == wait.label)) checkLabel(early->label, s.rank, wait);
        if (!early->bytes.empty()) std::memcpy(out, early->bytes.data(), early->bytes.size());
        s.inbox->dropOldest(args.tag);
        co_return;
      }
      if (s.inbox->busy()) continue;
      const void* head = s.from->tryAcquire();
      if (head == nullptr) continue;
      const MessageLabel label = s.from->labelOf(head);
      if (label.kind == OperationKind::kSend && label.root == args.tag) {
        checkStreamPosition(*s.inbox, label, s.rank, wait);
        matched(s, label, args, wait);
        chosen = &s;  // read in place
        break;
      }
      // Another tag's: its own Recv, if one runs, reads it in place;
      // otherwise it goes to the stash and the FIFO moves on.
      if (!s.inbox->someoneWaits(label.root)) {
        co_await stashHead(*s.inbox, *s.from, s.rank, wait);
        stashed = true;
        break;
      }
    }
    if (chosen == nullptr && !stashed) co_await TurnOn{arrivals, wait};
  }
  ReadingHead reading(*chosen->inbox);
  const size_t chunk = prims.chunkElements(chosen->from->slotBytes());
  size_t start = 0;
  do {
    co_await prims.recv(*chosen->from, out + start * prims.elementSize(), std::min(chunk, args.count - start));
  } while ((start += chunk) < args.count);
}

}  // namespace loom

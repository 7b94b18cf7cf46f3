// Send and Recv: the point-to-point FIFO to or from one peer, chunk by
// chunk. The engine runs a pair's Sends one after another in posting order,
// and a pair's Recvs of one tag likewise, so messages of one tag between a
// pair match in posting order, as in MPI and NCCL, while every peer's
// queue moves independently. Recvs of different tags run side by side and
// share the FIFO through the peer's inbox (p2p_inbox.h). An empty message
// is still one message, as in MPI: it carries its label, so it matches
// exactly one Recv, and a Recv that expects elements from it fails naming
// both counts instead of reading the next message.
#include <algorithm>
#include <coroutine>
#include <cstring>

#include "base/error.h"
#include "collectives/collectives.h"
#include "collectives/p2p_inbox.h"
#include "collectives/primitives.h"

namespace loom {
namespace {

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

// What a Recv of one tag waits on: its peer's FIFO, and the inbox that the
// peer's other Recvs change. Its message may reach the stash while it
// waits (another Recv set it aside), with nothing more to come on the FIFO.
class InboxWait final : public Waitable {
 public:
  InboxWait(RecvConnection& from, PointToPointInbox& inbox, int tag) : from_(from), inbox_(inbox), tag_(tag) {}
  int peer() const override { return from_.peer(); }
  size_t slotBytes() const override { return from_.slotBytes(); }
  bool ready() override {
    const PointToPointInbox::Stashed* early = inbox_.oldest(tag_);
    if (early != nullptr && early->complete) return true;
    return !inbox_.busy() && from_.ready();
  }
  void checkPeer(const WaitContext& ctx) override { from_.checkPeer(ctx); }
  const char* peerMustDo() const override { return from_.peerMustDo(); }
  void watch(bool on) override { from_.watch(on); }
  int pollFd() override { return from_.pollFd(); }
  void pollReady() override { from_.pollReady(); }

 private:
  RecvConnection& from_;
  PointToPointInbox& inbox_;
  int tag_;
};

// For as long as a Recv runs, its inbox knows it waits for its tag (and
// forgets it when the Recv ends, failed or not).
class WaitingFor {
 public:
  WaitingFor(PointToPointInbox& inbox, int tag) : inbox_(inbox), tag_(tag) { inbox_.startWaiting(tag_); }
  ~WaitingFor() { inbox_.stopWaiting(tag_); }
  WaitingFor(const WaitingFor&) = delete;
  WaitingFor& operator=(const WaitingFor&) = delete;

 private:
  PointToPointInbox& inbox_;
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

// Copies the message at the head of `from`, every slot of it, into the
// inbox's stash. Its label comes off the wire: it is checked before its
// size is trusted, and every later slot must carry the same label.
Task<> stashHead(PointToPointInbox& inbox, RecvConnection& from, int sender, const WaitContext& wait) {
  ReadingHead reading(inbox);
  const MessageLabel label = from.labelOf(from.tryAcquire());
  const size_t elementSize =
      label.kind == OperationKind::kSend ? loomTypeSize(static_cast<loomDataType_t>(label.dtype)) : 0;
  if (elementSize == 0 || label.root < 0)
    fail(loomRemoteError, wait.describe() + ": rank " + std::to_string(sender) +
                              " sent a point-to-point message labeled " + label.describe() +
                              ", which no Send writes (the two ranks run different builds of Loom, or the bytes "
                              "were corrupted)");
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

}  // namespace

Task<> pointToPointSend(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  SendConnection& to = team.sendTo(args.root, Channel::kPointToPoint);
  const size_t chunk = prims.chunkElements(to.slotBytes());
  const char* in = static_cast<const char*>(args.sendbuf);
  size_t start = 0;
  do {
    co_await prims.send(to, in + start * prims.elementSize(), std::min(chunk, args.count - start));
  } while ((start += chunk) < args.count);
}

Task<> pointToPointRecv(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  Primitives prims(wait, args.dtype, args.op, team.nranks, args.memory);
  RecvConnection& from = team.recvFrom(args.root, Channel::kPointToPoint);
  const int sender = team.peerOf(args.root);
  PointToPointInbox& inbox = team.inboxes->from(sender);
  WaitingFor waiting(inbox, args.tag);
  InboxWait arrival(from, inbox, args.tag);
  char* out = static_cast<char*>(args.recvbuf);
  for (;;) {
    // A message of this tag that came before any Recv asked is the next one.
    if (PointToPointInbox::Stashed* early = inbox.oldest(args.tag); early != nullptr && early->complete) {
      if (!(early->label == wait.label)) checkLabel(early->label, sender, wait);
      if (!early->bytes.empty()) std::memcpy(out, early->bytes.data(), early->bytes.size());
      inbox.dropOldest(args.tag);
      co_return;
    }
    if (!inbox.busy()) {
      if (const void* head = from.tryAcquire()) {
        const MessageLabel label = from.labelOf(head);
        if (label.kind == OperationKind::kSend && label.root == args.tag) break;  // ours: read in place
        // Another tag's: its own Recv, if one runs, reads it in place;
        // otherwise it goes to the stash and the FIFO moves on.
        if (!inbox.someoneWaits(label.root)) {
          co_await stashHead(inbox, from, sender, wait);
          continue;
        }
      }
    }
    co_await TurnOn{arrival, wait};
  }
  ReadingHead reading(inbox);
  const size_t chunk = prims.chunkElements(from.slotBytes());
  size_t start = 0;
  do {
    co_await prims.recv(from, out + start * prims.elementSize(), std::min(chunk, args.count - start));
  } while ((start += chunk) < args.count);
}

// Two trips of an empty slot around the ring: after the first every rank
// has arrived; the second tells every rank so.
Task<> ringBarrier(const Team& team, const WaitContext& wait) {
  if (team.nranks == 1) co_return;
  Primitives prims(wait, loomUint8, loomSum, team.nranks, MemoryKind::kHost);  // empty messages
  SendConnection& next = team.next();
  RecvConnection& prev = team.prev();
  if (team.ringPosition == 0) {
    co_await prims.send(next, nullptr, 0);
    co_await prims.recvCopySend(prev, next, nullptr, 0);
    co_await prims.recv(prev, nullptr, 0);
  } else {
    co_await prims.recvCopySend(prev, next, nullptr, 0);
    co_await prims.recvCopySend(prev, next, nullptr, 0);
  }
}

}  // namespace loom

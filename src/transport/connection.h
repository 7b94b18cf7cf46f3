// The one interface between algorithms and transports: a one-way FIFO of
// fixed-size slots to or from one peer. The sender acquires a free slot (a
// pointer the peer will read in place), fills it and posts it; the receiver
// acquires the next filled slot, reads it in place and releases it. Slots
// travel in order, so sender and receiver agree on what each slot holds by
// running the same schedule. Every slot carries its operation's
// MessageLabel, where its transport keeps it (labelSlot, labelOf):
// acquiring writes it on the sending side and checks it on the receiving
// side, so ranks whose schedules differ fail on their first message
// (message_label.h).
//
// Acquiring never blocks: a schedule writes `co_await conn.acquire(wait)`,
// which returns the slot at once when there is one and otherwise parks the
// operation (wait_context.h) until the engine sees the connection ready.
#pragma once

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "transport/message_label.h"
#include "transport/wait_context.h"

namespace loom {

// One side of a connection, as the engine sees it while an operation waits.
class Waitable {
 public:
  virtual ~Waitable() = default;
  virtual int peer() const = 0;
  virtual size_t slotBytes() const = 0;
  // Whether acquiring would return a slot now. Never blocks; throws if the
  // connection is broken (its two sides out of step).
  virtual bool ready() = 0;
  // Asked by the engine of a wait that has lasted (the engine was about to
  // sleep): throws an Error naming the peer when it will never move (the
  // peer exited, failed, or called something else); returns otherwise.
  virtual void checkPeer(const WaitContext& ctx) = 0;
  // What the peer must do for this side to move, for sentences.
  virtual const char* peerMustDo() const = 0;
  // Set while this rank's engine sleeps waiting on this side: only then
  // does the peer's next post or release ring this rank's doorbell, so a
  // rank asleep on one peer is not woken by every other peer's traffic.
  virtual void watch(bool on) = 0;
  // A descriptor that turns readable when this side may move (tcp: the
  // socket its data arrives on), which an idle engine may sleep on in
  // poll() instead of its doorbell when every wait lends one
  // (idle_sleep.h). Asking claims it from the transport's own thread, which
  // leaves its reads to the engine until Transport::takeBackDescriptors.
  // -1: none.
  virtual int pollFd() { return -1; }
  // poll() found pollFd() readable (or closed): take in what came.
  virtual void pollReady() {}
};

// `co_await connection.acquire(wait)`: the slot, once the peer allows.
template <typename Connection, typename Slot>
struct SlotAwaiter {
  Connection& connection;
  const WaitContext& wait;
  Slot slot = nullptr;
  size_t dataBytes = 0;  // receiving: what the slot must hold

  bool await_ready() {
    slot = connection.tryAcquire();
    if (slot == nullptr) return false;
    onAcquired(slot);
    return true;
  }
  void await_suspend(std::coroutine_handle<> self) { wait.park(self, connection); }
  Slot await_resume() {
    if (slot != nullptr) return slot;  // await_ready acquired it
    slot = connection.tryAcquire();    // resumed because ready() said so
    if (slot == nullptr) wait.failResumedTooEarly(connection.peer());
    onAcquired(slot);
    return slot;
  }
  // Sending, the slot takes this operation's label; receiving, it must
  // carry it, or the ranks called different things. Where the label
  // travels is the transport's (labelSlot, labelOf).
  void onAcquired(void* data) { connection.labelSlot(data, wait.label); }
  void onAcquired(const void* data) {
    const MessageLabel label = connection.labelOf(data);
    if (!(label == wait.label)) checkLabel(label, connection.peer(), wait);
    const size_t arrived = connection.acquiredBytes();
    if (arrived != Connection::kBytesUnknown && arrived != dataBytes)
      failDataBytes(arrived, dataBytes, connection.peer(), wait);
  }
};

class SendConnection : public Waitable {
 public:
  // A free slot to fill, or null while the peer still holds them all.
  virtual void* tryAcquire() = 0;
  // Hands the acquired slot to the peer, of which the first `bytes` were
  // written (a transport that copies slots, tcp, sends only those). The
  // slot is the peer's from then on: a schedule never reads it again (in a
  // remote window or device memory it may not be readable at all, and the
  // in-memory transport reuses its buffer once the peer releases it).
  virtual void post(size_t bytes) = 0;
  // Hands the acquired `slot` to the peer holding `bytes` taken from `src`
  // (which may be the slot itself). A transport that copies slots out
  // anyway (tcp) sends what its socket takes now straight from `src` and
  // copies only the rest into the slot: `src` is never read once this
  // returns, so the caller may reuse it at once.
  virtual void postFrom(void* slot, const void* src, size_t bytes) {
    if (slot != src && bytes > 0) std::memcpy(slot, src, bytes);
    post(bytes);
  }
  // Whether postFrom may skip the copy into the slot: a step that writes
  // its chunk to the user's buffer anyway then sends it from there.
  virtual bool sendsFromSource() const { return false; }
  // Gives the acquired `slot` its operation's label (message_label.h), in
  // the form this transport carries it. Host-addressable slots keep it in
  // the bytes right in front of their data (shm's and tcp's do); a slot in
  // device memory or in a remote window keeps it where its transport can
  // write it.
  virtual void labelSlot(void* slot, const MessageLabel& label) {
    std::memcpy(static_cast<char*>(slot) - sizeof(MessageLabel), &label, sizeof(label));
  }
  SlotAwaiter<SendConnection, void*> acquire(const WaitContext& wait) { return {*this, wait}; }
  bool ready() override { return tryAcquire() != nullptr; }
  const char* peerMustDo() const override { return "to free a slot"; }
};

class RecvConnection : public Waitable {
 public:
  // The next filled slot, or null until the peer posts it.
  virtual const void* tryAcquire() = 0;
  // Gives the acquired slot back to the peer; its data is gone with it.
  virtual void release() = 0;
  // The data bytes the sender put in the acquired slot, where the
  // transport carries them (tcp's frames do); kBytesUnknown where the
  // sender wrote the slot in place (shared memory).
  static constexpr size_t kBytesUnknown = SIZE_MAX;
  virtual size_t acquiredBytes() const { return kBytesUnknown; }
  // The label the sender gave the acquired `slot` (SendConnection::labelSlot).
  virtual MessageLabel labelOf(const void* slot) const {
    MessageLabel label;
    std::memcpy(&label, static_cast<const char*>(slot) - sizeof(MessageLabel), sizeof(label));
    return label;
  }
  // The next slot, which must hold `bytes` of data: a message cut another
  // way (a peer running other code) fails the wait instead of being read
  // with a stale tail.
  SlotAwaiter<RecvConnection, const void*> acquire(const WaitContext& wait, size_t bytes) {
    return {*this, wait, nullptr, bytes};
  }
  bool ready() override { return tryAcquire() != nullptr; }
  const char* peerMustDo() const override { return "to send data"; }
};

}  // namespace loom

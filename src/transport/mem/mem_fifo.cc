#include "transport/mem/mem_fifo.h"

#include <string>

#include "base/error.h"
#include "transport/peer_call.h"

namespace loom::mem {

void checkPeer(const Fabric& fabric, int peer, const WaitContext& ctx, Waitable& connection, bool inFlight) {
  const RankBoard& board = fabric.board(peer);
  if (board.failed.load(std::memory_order_acquire))
    fail(loomRemoteError,
         ctx.describe() + " failed because rank " + std::to_string(peer) + " failed: " + board.failure());
  if (ctx.call != nullptr) {
    if (const std::optional<CollectiveCall> theirs = board.readCall()) {
      // A delayed message may still be on its way while its sender already
      // announced a later collective: only the arguments can be judged then.
      if (fabric.delays())
        checkPeerArguments(ctx, peer, *theirs);
      else
        checkPeerCall(ctx, peer, *theirs, connection);
    }
  }
  // A rank that posted everything and then left is not a failure: what it
  // posted still arrives.
  if (board.left.load(std::memory_order_acquire) && !inFlight)
    fail(loomRemoteError, ctx.describe() + " failed: rank " + std::to_string(peer) +
                              " left the in-memory fabric while this rank was waiting for it " +
                              connection.peerMustDo());
}

MemSendConnection::MemSendConnection(Fabric& fabric, int self, int peer, Channel channel)
    : fabric_(fabric),
      fifo_(fabric.fifo(self, peer, channel)),
      self_(self),
      peer_(peer),
      slots_(static_cast<uint32_t>(fabric.shape().slots)) {}

void* MemSendConnection::tryAcquire() {
  if (posted_ - fifo_.released.load(std::memory_order_acquire) >= slots_) return nullptr;
  MemSlot& slot = next();
  if (slot.data == nullptr) slot.data = fabric_.takeBuffer();
  return slot.data.get();
}

void MemSendConnection::labelSlot(void* slot, const MessageLabel& label) {
  MemSlot& acquired = next();
  if (slot != acquired.data.get())
    fail(loomInternalError, "a slot to rank " + std::to_string(peer_) + " was labelled that is not the acquired one");
  acquired.label = label;
}

void MemSendConnection::post(size_t bytes) {
  MemSlot& slot = next();
  slot.bytes = bytes;
  slot.visibleAtNs = fabric_.deliveryTime(fifo_, peer_);
  if (Timeline* timeline = fabric_.timeline()) slot.stamp = timeline->post(self_, peer_, bytes, slot.freedAtUs);
  slot.mark.store(posted_ + 1, std::memory_order_release);
  fifo_.posted.store(++posted_, std::memory_order_release);
  // As shm's FIFO: the receiver's last look before it sleeps sees this
  // post, or this load sees it watching.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (fifo_.postedWatched.load(std::memory_order_relaxed) != 0) fabric_.board(peer_).doorbell.ring();
}

MemRecvConnection::MemRecvConnection(Fabric& fabric, int self, int peer, Channel channel)
    : fabric_(fabric),
      fifo_(fabric.fifo(peer, self, channel)),
      peer_(peer),
      self_(self),
      slots_(static_cast<uint32_t>(fabric.shape().slots)) {}

const void* MemRecvConnection::tryAcquire() {
  MemSlot& slot = next();
  if (slot.mark.load(std::memory_order_acquire) != released_ + 1) return nullptr;
  if (slot.visibleAtNs != 0 && steadyNanos() < slot.visibleAtNs) return nullptr;
  if (Timeline* timeline = fabric_.timeline()) timeline->arrived(self_, slot.stamp);
  return slot.data.get();
}

MessageLabel MemRecvConnection::labelOf(const void* slot) const {
  const MemSlot& acquired = next();
  if (slot != acquired.data.get())
    fail(loomInternalError, "rank " + std::to_string(self_) + " read the label of a slot from rank " +
                                std::to_string(peer_) + " that is not the acquired one");
  return acquired.label;
}

void MemRecvConnection::release() {
  MemSlot& slot = next();
  if (Timeline* timeline = fabric_.timeline()) slot.freedAtUs = timeline->released(self_, peer_, slot.bytes);
  fabric_.giveBack(std::move(slot.data));
  fifo_.released.store(++released_, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (fifo_.releasedWatched.load(std::memory_order_relaxed) != 0) fabric_.board(peer_).doorbell.ring();
}

}  // namespace loom::mem

#include "transport/tcp/tcp_connection.h"

#include <string>

#include "base/error.h"
#include "transport/peer_call.h"
#include "transport/tcp/tcp_progress.h"

namespace loom::tcp {

void* TcpSendConnection::tryAcquire() {
  const uint64_t slots = static_cast<uint64_t>(ring_.memory.geometry().slots);
  if (posted_ - sentSeen_ >= slots) {
    sentSeen_ = ring_.sent.load(std::memory_order_acquire);
    if (posted_ - sentSeen_ >= slots) return nullptr;
  }
  return ring_.memory.data(posted_);
}

void TcpSendConnection::post(size_t bytes) {
  const uint64_t slots = static_cast<uint64_t>(ring_.memory.geometry().slots);
  ring_.bytes[posted_ % slots] = static_cast<uint32_t>(bytes);
  ring_.posted.store(++posted_, std::memory_order_release);
  if (channel_.progress.sendFromEngine(channel_.links)) channel_.wakeup.wake();
}

void TcpSendConnection::postFrom(void* /*slot*/, const void* src, size_t bytes) {
  const uint64_t slots = static_cast<uint64_t>(ring_.memory.geometry().slots);
  ring_.bytes[posted_ % slots] = static_cast<uint32_t>(bytes);
  const uint64_t number = posted_++;
  const size_t link = channel_.links[number % channel_.links.size()];
  if (channel_.progress.postFromSource(link, number, static_cast<const char*>(src), bytes)) channel_.wakeup.wake();
}

void TcpSendConnection::checkPeer(const WaitContext& ctx) {
  checkTcpPeer(ctx, channel_.peer, channel_.state, *this);
}

const void* TcpRecvConnection::tryAcquire() {
  if (!arrived()) {
    channel_.progress.receiveFromEngine(channel_.links);
    if (!arrived()) return nullptr;
  }
  return ring_.memory.data(released_);
}

void TcpRecvConnection::release() {
  ring_.released.store(++released_, std::memory_order_release);
  // A reader stalled on the full ring may go on. Either this sees it
  // stalled, or the thread, which stalls and then looks at `released`
  // before it sleeps, sees the release (full fences on both sides).
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (ring_.stalledReaders.load(std::memory_order_relaxed) != 0) channel_.wakeup.wake();
}

int TcpRecvConnection::pollFd() {
  return channel_.progress.claimForEngine(nextLink());
}

void TcpRecvConnection::pollReady() {
  channel_.progress.receiveClaimed(nextLink());
}

void TcpRecvConnection::checkPeer(const WaitContext& ctx) {
  checkTcpPeer(ctx, channel_.peer, channel_.state, *this);
}

void checkTcpPeer(const WaitContext& ctx, const PeerName& peer, const PeerState& state, Waitable& connection) {
  const PeerState::Heard heard = state.heard();
  if (heard.failed)
    fail(loomRemoteError,
         ctx.describe() + " failed because rank " + std::to_string(peer.rank) + " failed: " + heard.failure);
  // Not whether the peer moved on: its heartbeat may overtake the data it
  // sent before (peer_call.h); the labels catch a later collective's data.
  if (heard.haveCall) checkPeerArguments(ctx, peer.rank, heard.call);
  // Data that arrived before the connection ended is still read: only a
  // wait that cannot move is failed.
  if (state.broken() && !connection.ready())
    fail(loomRemoteError, ctx.describe() + " failed: " + state.brokenBecause() +
                              " while this rank was waiting for it " + connection.peerMustDo());
}

}  // namespace loom::tcp

// The engine's side of a TCP peer: the slot FIFOs of connection.h over the
// rings the progress thread moves (tcp_rings.h). Posting a slot sends it
// from the engine's thread when the sockets are free, and looking for a
// slot that has not arrived reads them (tcp_progress.h); what the engine
// could not finish wakes the thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/wakeup.h"
#include "transport/connection.h"
#include "transport/tcp/tcp_rings.h"

namespace loom::tcp {

class TcpProgress;

// Who is at the other end, for sentences: "rank 3 (host b)".
struct PeerName {
  int rank;
  std::string host;
  std::string describe() const { return "rank " + std::to_string(rank) + " (host " + host + ")"; }
};

// What both directions of a channel know of it: the peer, what was heard
// from it, and how to move its bytes (this channel's sockets, as indexes
// into the progress thread's table).
struct TcpChannel {
  PeerName peer;
  const PeerState& state;
  Wakeup& wakeup;
  TcpProgress& progress;
  std::vector<size_t> links;
};

class TcpSendConnection final : public SendConnection {
 public:
  TcpSendConnection(TcpChannel channel, SendRing& ring) : channel_(std::move(channel)), ring_(ring) {}
  size_t slotBytes() const override { return ring_.memory.geometry().slotBytes; }
  int peer() const override { return channel_.peer.rank; }
  void* tryAcquire() override;
  void post(size_t bytes) override;
  void postFrom(void* slot, const void* src, size_t bytes) override;
  bool sendsFromSource() const override { return true; }
  void checkPeer(const WaitContext& ctx) override;
  void watch(bool on) override { ring_.watched.store(on ? 1 : 0, std::memory_order_relaxed); }

 private:
  TcpChannel channel_;
  SendRing& ring_;
  uint64_t posted_ = 0;    // only the engine writes `posted`
  uint64_t sentSeen_ = 0;  // `sent` when last read: a lower bound of it
};

class TcpRecvConnection final : public RecvConnection {
 public:
  TcpRecvConnection(TcpChannel channel, RecvRing& ring) : channel_(std::move(channel)), ring_(ring) {}
  size_t slotBytes() const override { return ring_.memory.geometry().slotBytes; }
  int peer() const override { return channel_.peer.rank; }
  const void* tryAcquire() override;
  void release() override;
  size_t acquiredBytes() const override { return ring_.bytes[released_ % ring_.bytes.size()]; }
  void checkPeer(const WaitContext& ctx) override;
  void watch(bool on) override { ring_.watched.store(on ? 1 : 0, std::memory_order_relaxed); }
  int pollFd() override;
  void pollReady() override;

 private:
  bool arrived() const { return ring_.markOf(released_).load(std::memory_order_acquire) == released_ + 1; }

  TcpChannel channel_;
  RecvRing& ring_;
  uint64_t released_ = 0;  // only the engine writes `released`
  size_t nextLink() const { return channel_.links[released_ % channel_.links.size()]; }
};

// What both sides check before the engine sleeps on a TCP peer: a broken
// connection, a failure the peer announced, a call it says it runs.
void checkTcpPeer(const WaitContext& ctx, const PeerName& peer, const PeerState& state, Waitable& connection);

}  // namespace loom::tcp

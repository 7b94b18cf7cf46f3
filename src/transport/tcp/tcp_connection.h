// The engine's side of a TCP peer: the slot FIFOs of connection.h over the
// rings the progress thread moves (tcp_rings.h). Acquiring and posting
// touch only this process's memory; posting wakes the thread if it sleeps.
#pragma once

#include <cstddef>
#include <cstdint>

#include "transport/connection.h"
#include "transport/tcp/tcp_rings.h"
#include "transport/tcp/tcp_wakeup.h"

namespace loom::tcp {

// Who is at the other end, for sentences: "rank 3 (host b)".
struct PeerName {
  int rank;
  std::string host;
  std::string describe() const { return "rank " + std::to_string(rank) + " (host " + host + ")"; }
};

class TcpSendConnection final : public SendConnection {
 public:
  TcpSendConnection(PeerName peer, SendRing& ring, const PeerState& state, Wakeup& wakeup)
      : peer_(std::move(peer)), ring_(ring), state_(state), wakeup_(wakeup) {}
  size_t slotBytes() const override { return ring_.memory.geometry().slotBytes; }
  int peer() const override { return peer_.rank; }
  void* tryAcquire() override;
  void post(size_t bytes) override;
  void checkPeer(const WaitContext& ctx) override;
  void watch(bool on) override { ring_.watched.store(on ? 1 : 0, std::memory_order_relaxed); }

 private:
  PeerName peer_;
  SendRing& ring_;
  const PeerState& state_;
  Wakeup& wakeup_;
  uint64_t posted_ = 0;    // only the engine writes `posted`
  uint64_t sentSeen_ = 0;  // `sent` when last read: a lower bound of it
};

class TcpRecvConnection final : public RecvConnection {
 public:
  TcpRecvConnection(PeerName peer, RecvRing& ring, const PeerState& state, Wakeup& wakeup)
      : peer_(std::move(peer)), ring_(ring), state_(state), wakeup_(wakeup) {}
  size_t slotBytes() const override { return ring_.memory.geometry().slotBytes; }
  int peer() const override { return peer_.rank; }
  const void* tryAcquire() override;
  void release() override;
  void checkPeer(const WaitContext& ctx) override;
  void watch(bool on) override { ring_.watched.store(on ? 1 : 0, std::memory_order_relaxed); }

 private:
  PeerName peer_;
  RecvRing& ring_;
  const PeerState& state_;
  Wakeup& wakeup_;
  uint64_t released_ = 0;  // only the engine writes `released`
};

// What both sides check before the engine sleeps on a TCP peer: a broken
// connection, a failure the peer announced, a call it says it runs.
void checkTcpPeer(const WaitContext& ctx, const PeerName& peer, const PeerState& state, Waitable& connection);

}  // namespace loom::tcp

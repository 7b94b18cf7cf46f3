// One transport kind's connections from this rank to the peers the registry
// chose it for (registry.h); connections.h puts the kinds together. Peers are
// communicator ranks.
#pragma once

#include <cstdint>
#include <string>

#include "base/doorbell.h"
#include "transport/collective_call.h"
#include "transport/connection.h"
#include "transport/idle_sleep.h"
#include "transport/peer_memory.h"

namespace loom {

// Each pair of ranks has one set of connections per channel, so that
// operations on different channels never interleave their slots:
// collectives run one after another on theirs, while Sends and Recvs,
// which progress independently of the collectives, use their own.
enum class Channel { kCollective, kPointToPoint };
constexpr int kChannels = 2;

// A rank's last sign of life, as its peers see it (milliseconds of the
// host's coarse monotonic clock).
struct PeerProgress {
  bool known = false;  // false where the transport cannot see the peer's
  int64_t heartbeatMs = 0;
  int waitingFor = -1;  // the peer its oldest waiting operation waits for; -1: none
};

// The ranks' links, as their kernels give their interfaces' rates
// (bootstrap/link_rate.h), gathered by the network transport: every rank
// learns the same at init.
struct NetworkRate {
  int64_t mbps = 0;      // the slowest rate a rank's kernel gave; 0: none gave one
  int rank = -1;         // that rank; -1: none gave one
  int unknownRank = -1;  // the first rank whose kernel gave none; -1: every one did
  // Whether any rank has a network transport's peers.
  bool any() const { return rank >= 0 || unknownRank >= 0; }
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual SendConnection& sendTo(int peer, Channel channel = Channel::kCollective) = 0;
  virtual RecvConnection& recvFrom(int peer, Channel channel = Channel::kCollective) = 0;
  // How this kind's connections move data: by whoever polls them (shm:
  // the peer writes the slots, the engine only looks), or on a thread of
  // the transport's own (tcp), which needs a CPU a waiting engine would
  // otherwise spin on, and which may lend the engine the descriptors its
  // waits can sleep on (Waitable::pollFd, idle_sleep.h).
  enum class ProgressBy { kPoller, kOwnThread };
  virtual ProgressBy progressBy() const { return ProgressBy::kPoller; }
  // Where this rank's engine sleeps, if this transport's peers can ring it
  // (shm: in the status page they map); null if it cannot host one.
  virtual Doorbell* doorbell() = 0;
  // Where the engine sleeps after all (connections.h chooses): a transport
  // whose own thread moves data rings it when a watched connection moves.
  // Called once, after every transport is set up.
  virtual void useIdleSleep(IdleSleep* /*engine*/) {}
  // The engine no longer polls the descriptors it took from this
  // transport's waits: its own thread reads them again.
  virtual void takeBackDescriptors() {}

  // The arrival board: each rank announces the collective it starts (its
  // number, and the call's arguments), so a rank left waiting can say which
  // peers never arrived, or called something else.
  virtual void announceCollectiveStarted(const CollectiveCall& call) = 0;
  // -1 when this transport cannot see the peer's count.
  virtual int64_t collectivesStartedBy(int peer) const = 0;
  // Tells every peer this rank failed, so they stop waiting for it.
  virtual void announceFailure(const std::string& sentence) = 0;
  // The heartbeat: this rank's engine calls it at least every 50 ms while it
  // has operations pending, so a rank that stopped (SIGSTOP, a debugger, a
  // starved core) is told from one that waits on another rank.
  virtual void publishProgress(int64_t nowMs, int waitingFor) = 0;
  virtual PeerProgress progressOf(int peer) const = 0;
  // Single-copy reads of peers' buffers; null unless every rank of the
  // communicator can read every other's (decided together at init).
  virtual PeerMemory* peerMemory() const = 0;
  // Why peerMemory() is null; empty when it is not, or was not asked for.
  virtual std::string peerMemoryUnavailable() const { return {}; }
  // How this transport carries its peers, for the log line of each
  // connection: "SHM", "TCP/10.0.0.1 (2 sockets)".
  virtual std::string describe() const = 0;
  // The links of the ranks a network transport connects; none for a
  // transport within a host.
  virtual NetworkRate networkRate() const { return {}; }
};

}  // namespace loom

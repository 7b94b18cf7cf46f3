// The thread that moves a rank's TCP traffic: it sends the slots the engine
// posts and receives the peer's slots straight into the ring the engine
// reads, over non-blocking sockets it polls together with a wake-up
// (base/wakeup.h). It rings the engine's doorbell when a connection the
// engine sleeps on moves, and when a peer fails or its connection ends.
// Sending is tcp_progress_send.cc, receiving tcp_progress_receive.cc.
// One such thread per communicator that has TCP peers, as NCCL's proxy
// thread and Gloo's device loop; the engine never blocks on a socket.
//
// The engine also moves bytes itself, as Open MPI's TCP BTL does from the
// calling thread: posting a slot sends it at once, and looking for a slot
// that has not arrived reads the socket, each only when the thread is not
// at the sockets (a try-lock) and never blocking. A message then crosses no
// thread when the engine is awake; the thread covers what is left: a full
// socket, frames arriving while the engine sleeps, control frames.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/wakeup.h"
#include "bootstrap/socket.h"
#include "transport/idle_sleep.h"
#include "transport/tcp/tcp_connection.h"
#include "transport/tcp/tcp_rings.h"
#include "transport/tcp/tcp_wire.h"

namespace loom::tcp {

// One socket of a peer's channel. With n sockets per channel, socket i
// carries slots i, i + n, i + 2n... in each direction, so the slots of a
// large message travel side by side.
struct SocketLink {
  int fd = -1;
  int index = 0;    // i
  int count = 1;    // n
  size_t peer = 0;  // index of the peer in the progress thread's table
  SendRing* send = nullptr;
  RecvRing* recv = nullptr;
  bool carriesControl = false;  // failures and heartbeats go on one socket per peer

  // Sending: the frame under way.
  bool writing = false;
  bool wantsOut = false;  // the socket was full: wait for POLLOUT
  bool outIsData = false;
  FrameHeader outHeader{};
  const char* outPayload = nullptr;
  size_t outBytes = 0;  // payload bytes
  size_t outDone = 0;   // header and payload bytes sent so far
  std::string outControl;
  uint64_t nextSend = 0;

  // Receiving: the frame under way.
  FrameHeader inHeader{};
  size_t inHeaderDone = 0;
  bool inPayload = false;
  char* inTarget = nullptr;
  size_t inLeft = 0;
  std::string inControl;
  uint64_t nextRecv = 0;
  bool stalled = false;    // the next slot's ring is full: wait for the engine
  bool claimed = false;    // the engine polls and reads it (claimForEngine)
  bool inDiscard = false;  // stopping: the frame is read and dropped
};

// A peer: its name, what was heard from it, its sockets (indexes into the
// link table, both channels), and its control frames waiting to be sent.
struct PeerLinks {
  PeerName name;
  PeerState* state = nullptr;
  std::vector<size_t> links;
  std::deque<std::string> control;  // under the progress thread's mutex
  bool controlEnded = false;        // its control socket closed: it is leaving (under the mutex)
};

class TcpProgress {
 public:
  // sockets[i] is links[i]'s connection, which this then owns.
  TcpProgress(std::vector<SocketLink> links, std::vector<bootstrap::Socket> sockets, std::vector<PeerLinks> peers,
              Wakeup& wakeup, int rank);
  ~TcpProgress();
  TcpProgress(const TcpProgress&) = delete;
  TcpProgress& operator=(const TcpProgress&) = delete;

  void start();
  // What this thread rings when a connection the engine watches moves.
  void useIdleSleep(IdleSleep* engine) { engine_.store(engine, std::memory_order_release); }
  // Queues a control frame (header and payload) for every peer, or for one.
  void sendControlToAll(const std::string& frame);
  // Sends what was posted (until nothing could be sent for quietMs), stops the
  // thread, lets the kernel deliver what it holds (bounded), closes.
  void stop(int64_t quietMs);

  // The engine's own I/O on one channel's sockets (indexes into the link
  // table): sends what it posted / receives what has arrived, without
  // blocking, unless the thread holds the sockets. Returns whether the
  // thread has work left there (a socket that was full, or was busy).
  bool sendFromEngine(const std::vector<size_t>& links);
  void receiveFromEngine(const std::vector<size_t>& links);
  // Posts slot `number` of link `index`'s ring, its data `bytes` at `src`:
  // when the socket is idle the frame goes out straight from `src` (the
  // kernel copies it, not this rank), and only what the socket did not
  // take is copied into the slot for the rest of the frame. `src` is not
  // read after this returns. Returns whether the thread has work left.
  bool postFromSource(size_t index, uint64_t number, const char* src, size_t bytes);

  // The engine sleeps in poll on link `index` (returns its socket, -1 once
  // closed): this thread stops reading it, so that a message wakes the
  // engine alone, not this thread and then the engine. It reads it again
  // after releaseClaims (the engine sleeps on its doorbell instead), and
  // while stopping.
  int claimForEngine(size_t index);
  // The engine's read of a claimed link that poll found readable: waits
  // for the link table if this thread holds it, since nobody else will.
  void receiveClaimed(size_t index);
  void releaseClaims();

 private:
  static int64_t nowMs();
  static bool transient(int error);  // "nothing yet": try again later
  void run();
  bool pumpWriter(SocketLink& link);
  bool startNextFrame(SocketLink& link);
  size_t sendFrameFrom(SocketLink& link, const FrameHeader& header, const char* src, size_t bytes);
  void sendFailed(SocketLink& link);  // after a send that failed: errno says why
  bool pumpReader(SocketLink& link);
  void readIfRoom(SocketLink& link);
  void setStalled(SocketLink& link, bool stalled);
  bool threadReads(const SocketLink& link) const;
  enum class Received { kBytes, kNothingYet, kClosed, kFailed };
  Received receive(SocketLink& link, char* into, size_t bytes, size_t* got);
  void finishFrame(SocketLink& link);
  std::string cutShort(size_t peer) const;
  void updateSent(const SocketLink& link);
  bool roomFor(const SocketLink& link) const;
  bool controlWaitingFor(int peer);
  bool workWaiting();
  bool everythingSent();
  void endLink(SocketLink& link);
  void dropControlOf(size_t peer);
  void breakPeer(size_t peer, const std::string& sentence);
  void ringEngine();
  void ringIfWatched(const std::atomic<uint32_t>& watched);

  // Held by whoever moves bytes or reads a link's state: the thread, or
  // the engine (try-lock only) for its own sends and receives.
  std::mutex io_;
  std::vector<SocketLink> links_;
  std::vector<PeerLinks> peers_;
  Wakeup& wakeup_;
  std::atomic<IdleSleep*> engine_{nullptr};
  std::mutex controlMutex_;
  std::atomic<bool> controlQueued_{false};
  std::atomic<bool> stopping_{false};
  int64_t quietMs_ = 0;
  const int rank_;            // for the log
  bool pollFailing_ = false;  // said once, not at every retry
  std::thread thread_;
};

}  // namespace loom::tcp

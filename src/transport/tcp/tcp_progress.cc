#include "transport/tcp/tcp_progress.h"

#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/logging.h"

namespace loom::tcp {
namespace {

// The longest poll: stop requests and stalls come through the wake-up, so
// this only bounds how stale a missed edge could make things.
constexpr int kPollMs = 100;
// After the thread stops, how long the kernel may take to deliver what it
// holds before the sockets close (a close with bytes unsent may reset).
constexpr int64_t kLingerMs = 2000;
// Control frames waiting per peer, at most.
constexpr size_t kMaxQueuedControl = 64;

bool isHeartbeat(const std::string& frame) {
  FrameHeader header;
  std::memcpy(&header, frame.data(), sizeof(header));
  return header.kind == FrameKind::kHeartbeat;
}

int64_t nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool transient(int error) {
  return error == EAGAIN || error == EWOULDBLOCK || error == EINTR;
}

}  // namespace

TcpProgress::TcpProgress(std::vector<SocketLink> links, std::vector<PeerLinks> peers, Wakeup& wakeup)
    : links_(std::move(links)), peers_(std::move(peers)), wakeup_(wakeup) {}

TcpProgress::~TcpProgress() {
  if (thread_.joinable()) stop(0);
  for (SocketLink& link : links_)
    if (link.fd >= 0) close(link.fd);
}

void TcpProgress::start() {
  thread_ = std::thread([this] { run(); });
}

void TcpProgress::sendControlToAll(const std::string& frame) {
  const bool heartbeat = isHeartbeat(frame);
  {
    std::lock_guard<std::mutex> lock(controlMutex_);
    for (PeerLinks& peer : peers_) {
      if (peer.controlEnded) continue;  // nobody would send them any more
      // A peer that reads nothing (stopped) must not make this queue grow
      // for ever, nor lose the failure sentence that says why: a newer
      // heartbeat replaces a queued one (it says all the older one did),
      // and past the cap a new frame is dropped, not the oldest.
      auto queued =
          heartbeat ? std::find_if(peer.control.begin(), peer.control.end(), isHeartbeat) : peer.control.end();
      if (queued != peer.control.end())
        *queued = frame;
      else if (peer.control.size() < kMaxQueuedControl)
        peer.control.push_back(frame);
    }
    controlQueued_.store(true, std::memory_order_release);
  }
  wakeup_.wake();
}

void TcpProgress::stop(int64_t quietMs) {
  quietMs_ = quietMs;
  stopping_.store(true, std::memory_order_release);
  wakeup_.wake();
  if (thread_.joinable()) thread_.join();
  // Bytes the kernel has not yet delivered are lost if a socket closes
  // while the peer's heartbeats wait unread in it (the close resets): wait
  // for the send queues to empty first, briefly.
  const int64_t until = nowMs() + kLingerMs;
  for (SocketLink& link : links_) {
    if (link.fd < 0) continue;
    int unsent = 0;
    while (ioctl(link.fd, SIOCOUTQ, &unsent) == 0 && unsent > 0 && nowMs() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    char sink[4096];
    while (recv(link.fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
    }
    shutdown(link.fd, SHUT_WR);
    close(link.fd);
    link.fd = -1;
  }
}

void TcpProgress::ringEngine() {
  if (Doorbell* bell = engine_.load(std::memory_order_acquire)) bell->ring();
  if (Wakeup* engine = engineWakeup_.load(std::memory_order_acquire)) engine->wake();
}

// After publishing a slot or a freed one: either the engine's last look
// before it sleeps sees the change, or this sees it watching (a full fence
// on both sides, as base/doorbell.h explains).
void TcpProgress::ringIfWatched(const std::atomic<uint32_t>& watched) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (watched.load(std::memory_order_relaxed) != 0) ringEngine();
}

bool TcpProgress::roomFor(const SocketLink& link) const {
  const uint64_t slots = static_cast<uint64_t>(link.recv->memory.geometry().slots);
  return link.inHeader.number - link.recv->released.load(std::memory_order_acquire) < slots;
}

// Asked only while some peer has control frames queued: one whose
// control socket is full must not make the others' idle sockets count as
// work (the thread would poll without sleeping until it drains).
bool TcpProgress::controlWaitingFor(int peer) {
  std::lock_guard<std::mutex> lock(controlMutex_);
  return !peers_[peer].control.empty();
}

bool TcpProgress::workWaiting() {
  const bool control = controlQueued_.load(std::memory_order_acquire);
  for (SocketLink& link : links_) {
    if (link.fd < 0) continue;
    // Control frames wait only for a control socket that can take them.
    if (control && link.carriesControl && !link.wantsOut && controlWaitingFor(link.peer)) return true;
    if (stopping_.load(std::memory_order_relaxed) && link.stalled) return true;
    if (link.stalled && roomFor(link)) return true;
    if (!link.wantsOut && (link.writing || link.nextSend < link.send->posted.load(std::memory_order_acquire)))
      return true;
  }
  return false;
}

// What the engine posted: control frames (heartbeats) need not outlive it.
bool TcpProgress::everythingSent() {
  for (SocketLink& link : links_)
    if (link.fd >= 0 && (link.writing || link.nextSend < link.send->posted.load(std::memory_order_acquire)))
      return false;
  return true;
}

bool TcpProgress::sendFromEngine(const std::vector<size_t>& links) {
  std::unique_lock<std::mutex> lock(io_, std::try_to_lock);
  if (!lock.owns_lock()) return true;
  bool left = false;
  for (size_t index : links) {
    SocketLink& link = links_[index];
    if (link.fd < 0) continue;
    if (!link.wantsOut) pumpWriter(link);
    left |= link.fd >= 0 && link.wantsOut;
  }
  return left;
}

bool TcpProgress::postFromSource(size_t index, uint64_t number, const char* src, size_t bytes) {
  SocketLink& link = links_[index];
  SendRing& ring = *link.send;
  const FrameHeader header{FrameKind::kData, static_cast<uint32_t>(dataPayloadBytes(bytes)), number};
  const size_t frameBytes = sizeof(FrameHeader) + header.bytes;
  std::unique_lock<std::mutex> lock(io_, std::try_to_lock);
  // Straight from `src` only when this frame is the next the socket sends:
  // frames of one socket go out whole and in order.
  const bool direct = lock.owns_lock() && link.fd >= 0 && !link.writing && !link.wantsOut && link.nextSend == number;
  const size_t sent = direct ? sendFrameFrom(link, header, src, bytes) : 0;
  const size_t dataSent = sent > frameBytes - bytes ? sent - (frameBytes - bytes) : 0;
  char* slot = ring.memory.data(number);
  if (dataSent < bytes && slot != src) std::memcpy(slot + dataSent, src + dataSent, bytes - dataSent);
  if (sent > 0 && sent < frameBytes) {  // the socket is full: the rest goes from the slot
    link.outHeader = header;
    link.outPayload = ring.memory.label(number);
    link.outBytes = header.bytes;
    link.outDone = sent;
    link.outIsData = true;
    link.writing = true;
    link.wantsOut = true;
  }
  ring.posted.store(number + 1, std::memory_order_release);
  if (sent == frameBytes) {
    link.nextSend += static_cast<uint64_t>(link.count);
    updateSent(link);
  }
  if (!lock.owns_lock()) return true;
  if (link.fd >= 0 && !link.wantsOut) pumpWriter(link);
  return link.fd >= 0 && link.wantsOut;
}

// One non-blocking sendmsg of a whole data frame: the header, the slot's
// label, the data from `src`. Returns the bytes the socket took (0 when it
// was full, which sets wantsOut, or failed, which breaks the peer).
size_t TcpProgress::sendFrameFrom(SocketLink& link, const FrameHeader& header, const char* src, size_t bytes) {
  iovec parts[3] = {{const_cast<FrameHeader*>(&header), sizeof(FrameHeader)},
                    {link.send->memory.label(header.number), sizeof(MessageLabel)},
                    {const_cast<char*>(src), bytes}};
  msghdr message{};
  message.msg_iov = parts;
  message.msg_iovlen = bytes > 0 ? 3 : 2;
  for (;;) {
    const ssize_t n = sendmsg(link.fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n);
    if (errno == EINTR) continue;
    if (transient(errno)) {
      link.wantsOut = true;
      return 0;
    }
    sendFailed(link);
    return 0;
  }
}

int TcpProgress::claimForEngine(size_t index) {
  std::lock_guard<std::mutex> lock(io_);
  SocketLink& link = links_[index];
  if (link.fd < 0) return -1;
  if (!link.claimed) {
    link.claimed = true;
    wakeup_.wake();  // to poll again without it
  }
  return link.fd;
}

void TcpProgress::receiveClaimed(size_t index) {
  std::lock_guard<std::mutex> lock(io_);
  readIfRoom(links_[index]);
}

void TcpProgress::releaseClaims() {
  std::lock_guard<std::mutex> lock(io_);
  bool any = false;
  for (SocketLink& link : links_) {
    any |= link.claimed;
    link.claimed = false;
  }
  if (any) wakeup_.wake();
}

void TcpProgress::receiveFromEngine(const std::vector<size_t>& links) {
  std::unique_lock<std::mutex> lock(io_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  for (size_t index : links) readIfRoom(links_[index]);
}

// Whether this thread reads `link`. Not a stalled reader: a closed peer's
// socket would report POLLHUP at every poll while the engine has not made
// room. Not a socket the engine reads itself, unless stopping.
bool TcpProgress::threadReads(const SocketLink& link) const {
  return !link.stalled && (!link.claimed || stopping_.load(std::memory_order_acquire));
}

// Under io_, as every change of link.stalled: the ring counts its stalled
// sockets so that a release wakes this thread only when one waits.
void TcpProgress::setStalled(SocketLink& link, bool stalled) {
  if (link.stalled == stalled) return;
  link.stalled = stalled;
  if (stalled)
    link.recv->stalledReaders.fetch_add(1, std::memory_order_seq_cst);
  else
    link.recv->stalledReaders.fetch_sub(1, std::memory_order_relaxed);
}

// The engine's reads: a link whose ring is full waits for a release.
void TcpProgress::readIfRoom(SocketLink& link) {
  if (link.fd >= 0 && (!link.stalled || roomFor(link))) pumpReader(link);
}

void TcpProgress::run() {
  std::vector<pollfd> fds;
  std::vector<size_t> linkOf;
  int64_t lastMoved = nowMs();
  std::unique_lock<std::mutex> lock(io_);
  for (;;) {
    bool moved = false;
    for (SocketLink& link : links_)
      if (link.fd >= 0 && !link.wantsOut) moved |= pumpWriter(link);
    const bool stopping = stopping_.load(std::memory_order_acquire);
    for (SocketLink& link : links_)
      if (link.fd >= 0 && link.stalled && (stopping || roomFor(link))) moved |= pumpReader(link);
    if (moved) lastMoved = nowMs();
    if (stopping_.load(std::memory_order_acquire) && (everythingSent() || nowMs() - lastMoved >= quietMs_)) return;

    int timeout = 0;
    if (!moved) {
      wakeup_.arm();
      if (workWaiting()) {
        wakeup_.disarm();
      } else {
        timeout = kPollMs;
      }
    }
    fds.clear();
    linkOf.clear();
    for (size_t i = 0; i < links_.size(); ++i) {
      const SocketLink& link = links_[i];
      const bool reads = threadReads(link);
      if (link.fd < 0 || (!reads && !link.wantsOut)) continue;
      const short events = static_cast<short>((reads ? POLLIN : 0) | (link.wantsOut ? POLLOUT : 0));
      fds.push_back({link.fd, events, 0});
      linkOf.push_back(i);
    }
    fds.push_back({wakeup_.fd(), POLLIN, 0});
    lock.unlock();  // the engine may move bytes while this thread polls
    const int ready = poll(fds.data(), fds.size(), timeout);
    lock.lock();
    wakeup_.disarm();
    if (ready < 0) {
      if (errno == EINTR) continue;
      LOOM_WARN("TCP", -1, "poll failed in the TCP progress thread: " << std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (fds.back().revents != 0) wakeup_.drain();
    for (size_t i = 0; i + 1 < fds.size(); ++i) {
      SocketLink& link = links_[linkOf[i]];
      // The engine may have closed the socket during the poll (a failure
      // it met sending), and the number may already name another file.
      if (link.fd != fds[i].fd || fds[i].revents == 0) continue;
      if ((fds[i].revents & POLLOUT) && link.wantsOut) {
        link.wantsOut = false;
        moved |= pumpWriter(link);
      }
      // The engine may have read what the poll saw: pumpReader then finds
      // nothing and returns.
      if (link.fd >= 0 && threadReads(link) && (fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
        moved |= pumpReader(link);
    }
    if (moved) lastMoved = nowMs();
  }
}

bool TcpProgress::startNextFrame(SocketLink& link) {
  if (link.carriesControl && controlQueued_.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(controlMutex_);
    std::deque<std::string>& queue = peers_[link.peer].control;
    if (!queue.empty()) {
      link.outControl = std::move(queue.front());
      queue.pop_front();
      std::memcpy(&link.outHeader, link.outControl.data(), sizeof(FrameHeader));
      link.outPayload = link.outControl.data() + sizeof(FrameHeader);
      link.outBytes = link.outControl.size() - sizeof(FrameHeader);
      link.outDone = 0;
      link.outIsData = false;
      link.writing = true;
      bool more = false;
      for (const PeerLinks& peer : peers_) more |= !peer.control.empty();
      controlQueued_.store(more, std::memory_order_release);
      return true;
    }
  }
  const uint64_t posted = link.send->posted.load(std::memory_order_acquire);
  if (link.nextSend >= posted) return false;
  const uint64_t number = link.nextSend;
  const size_t slots = static_cast<size_t>(link.send->memory.geometry().slots);
  link.outBytes = dataPayloadBytes(link.send->bytes[number % slots]);
  link.outHeader = FrameHeader{FrameKind::kData, static_cast<uint32_t>(link.outBytes), number};
  link.outPayload = link.send->memory.label(number);
  link.outDone = 0;
  link.outIsData = true;
  link.writing = true;
  return true;
}

bool TcpProgress::pumpWriter(SocketLink& link) {
  bool progressed = false;
  for (;;) {
    if (!link.writing && !startNextFrame(link)) return progressed;
    iovec parts[2];
    int count = 0;
    if (link.outDone < sizeof(FrameHeader)) {
      parts[count++] = {reinterpret_cast<char*>(&link.outHeader) + link.outDone, sizeof(FrameHeader) - link.outDone};
      if (link.outBytes > 0) parts[count++] = {const_cast<char*>(link.outPayload), link.outBytes};
    } else {
      const size_t done = link.outDone - sizeof(FrameHeader);
      parts[count++] = {const_cast<char*>(link.outPayload) + done, link.outBytes - done};
    }
    msghdr message{};
    message.msg_iov = parts;
    message.msg_iovlen = static_cast<size_t>(count);
    const ssize_t n = sendmsg(link.fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (transient(errno)) {
        link.wantsOut = true;
        return progressed;
      }
      sendFailed(link);
      return true;
    }
    link.outDone += static_cast<size_t>(n);
    progressed = true;
    if (link.outDone < sizeof(FrameHeader) + link.outBytes) continue;
    link.writing = false;
    if (link.outIsData) {
      link.nextSend += static_cast<uint64_t>(link.count);
      updateSent(link);
    } else {
      link.outControl.clear();
    }
  }
}

void TcpProgress::sendFailed(SocketLink& link) {
  const std::string sentence =
      "the connection to " + peers_[link.peer].name.describe() + " failed while sending: " + std::strerror(errno);
  // A rank that fails tells its peers why, then exits; a send that meets
  // the closed socket (EPIPE, ECONNRESET) can come before this side has
  // read that frame, which still waits in the receive queue. Read what is
  // there first, so that the waits report the peer's sentence, which names
  // the rank where the failure began (a rank killed on its host).
  for (size_t index : peers_[link.peer].links) {
    SocketLink& other = links_[index];
    if (other.fd >= 0 && !other.stalled) pumpReader(other);
  }
  breakPeer(link.peer, sentence);
}

// Slots below the lowest one some socket of this channel has yet to send
// are all on the wire: the engine may fill them again.
void TcpProgress::updateSent(const SocketLink& link) {
  uint64_t lowest = link.send->posted.load(std::memory_order_acquire);
  for (size_t index : peers_[link.peer].links)  // this peer's sockets only: per slot, not per job
    if (links_[index].send == link.send) lowest = std::min(lowest, links_[index].nextSend);
  if (lowest > link.send->sent.load(std::memory_order_relaxed)) {
    link.send->sent.store(lowest, std::memory_order_release);
    ringIfWatched(link.send->watched);
  }
}

// One recv into `into`; an error other than "nothing yet" breaks the peer.
TcpProgress::Received TcpProgress::receive(SocketLink& link, char* into, size_t bytes, size_t* got) {
  const ssize_t n = recv(link.fd, into, bytes, MSG_DONTWAIT);
  if (n > 0) {
    *got = static_cast<size_t>(n);
    return Received::kBytes;
  }
  if (n == 0) return Received::kClosed;
  if (transient(errno)) return Received::kNothingYet;
  breakPeer(link.peer, "the connection to " + peers_[link.peer].name.describe() +
                           " failed while receiving: " + std::strerror(errno));
  return Received::kFailed;
}

bool TcpProgress::pumpReader(SocketLink& link) {
  bool progressed = false;
  for (;;) {
    size_t got = 0;
    if (!link.inPayload) {
      if (link.inHeaderDone < sizeof(FrameHeader)) {
        switch (receive(link, reinterpret_cast<char*>(&link.inHeader) + link.inHeaderDone,
                        sizeof(FrameHeader) - link.inHeaderDone, &got)) {
          case Received::kNothingYet: return progressed;
          case Received::kClosed: endLink(link); return true;
          case Received::kFailed: return true;
          case Received::kBytes: break;
        }
        link.inHeaderDone += got;
        progressed = true;
        continue;
      }
      const size_t slotBytes = link.recv->memory.geometry().slotBytes;
      const std::string problem = checkFrameHeader(link.inHeader, slotBytes, link.nextRecv);
      if (!problem.empty()) {
        breakPeer(link.peer, peers_[link.peer].name.describe() + " sent " + problem +
                                 " on its TCP connection: the two ranks disagree on the protocol, or the bytes "
                                 "were corrupted");
        return true;
      }
      const bool data = link.inHeader.kind == FrameKind::kData;
      // Once the engine is gone nothing will make room: a data frame is
      // taken off the socket anyway, so the peer's own last sends finish.
      link.inDiscard = data && !roomFor(link) && stopping_.load(std::memory_order_acquire);
      if (data && !link.inDiscard) {
        if (!roomFor(link)) {
          setStalled(link, true);
          return progressed;
        }
        link.inTarget = link.recv->memory.label(link.inHeader.number);
      } else {
        link.inControl.assign(link.inHeader.bytes, '\0');
        link.inTarget = link.inControl.data();
      }
      setStalled(link, false);
      link.inLeft = link.inHeader.bytes;
      link.inPayload = true;
    }
    while (link.inLeft > 0) {
      switch (receive(link, link.inTarget, link.inLeft, &got)) {
        case Received::kNothingYet: return progressed;
        case Received::kClosed:
          breakPeer(link.peer, peers_[link.peer].name.describe() +
                                   " closed its connection in the middle of a message (it exited, or aborted its "
                                   "communicator)");
          return true;
        case Received::kFailed: return true;
        case Received::kBytes: break;
      }
      link.inTarget += got;
      link.inLeft -= got;
      progressed = true;
    }
    if (link.inDiscard)
      link.nextRecv += static_cast<uint64_t>(link.count);
    else
      finishFrame(link);
    link.inDiscard = false;
    setStalled(link, false);
    link.inPayload = false;
    link.inHeaderDone = 0;
    progressed = true;
  }
}

void TcpProgress::finishFrame(SocketLink& link) {
  PeerState& state = *peers_[link.peer].state;
  switch (link.inHeader.kind) {
    case FrameKind::kData:
      link.recv->markOf(link.inHeader.number).store(link.inHeader.number + 1, std::memory_order_release);
      link.nextRecv += static_cast<uint64_t>(link.count);
      ringIfWatched(link.recv->watched);
      return;
    case FrameKind::kFailure:
      state.heardFailure(link.inControl);
      ringEngine();
      return;
    case FrameKind::kHeartbeat: {
      HeartbeatPayload beat;
      std::memcpy(&beat, link.inControl.data(), sizeof(beat));
      state.heardHeartbeat(nowMs(), beat.waitingFor, beat.collectivesStarted, beat.call);
      return;
    }
  }
}

// The peer closed this socket after its last frame. Its other sockets may
// still hold frames this rank has not read (a peer closes them one after
// another once its last sends are delivered), so only when every one has
// ended is the peer gone.
void TcpProgress::endLink(SocketLink& link) {
  close(link.fd);
  link.fd = -1;
  link.writing = false;
  if (link.carriesControl) dropControlOf(link.peer);
  for (size_t index : peers_[link.peer].links)
    if (links_[index].fd >= 0) return;
  breakPeer(link.peer, peers_[link.peer].name.describe() +
                           " closed its connection (it exited, or destroyed or aborted its communicator)");
}

// A peer whose control socket is gone gets no more control frames: its
// queue would otherwise keep the thread busy and a destroy flushing.
void TcpProgress::dropControlOf(size_t peer) {
  std::lock_guard<std::mutex> lock(controlMutex_);
  peers_[peer].controlEnded = true;
  peers_[peer].control.clear();
  bool more = false;
  for (const PeerLinks& other : peers_) more |= !other.control.empty();
  controlQueued_.store(more, std::memory_order_release);
}

void TcpProgress::breakPeer(size_t peer, const std::string& sentence) {
  dropControlOf(peer);
  PeerLinks& links = peers_[peer];
  links.state->breakWith(sentence);
  LOOM_INFO("TCP", -1, sentence);
  for (size_t index : links.links) {
    SocketLink& link = links_[index];
    if (link.fd >= 0) close(link.fd);
    link.fd = -1;
    link.writing = false;
    setStalled(link, false);
  }
  ringEngine();
}

}  // namespace loom::tcp

#include "transport/tcp/tcp_progress.h"

#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>

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

}  // namespace

int64_t TcpProgress::nowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool TcpProgress::transient(int error) {
  return error == EAGAIN || error == EWOULDBLOCK || error == EINTR;
}

TcpProgress::TcpProgress(std::vector<SocketLink> links, std::vector<bootstrap::Socket> sockets,
                         std::vector<PeerLinks> peers, Wakeup& wakeup, int rank)
    : links_(std::move(links)), peers_(std::move(peers)), wakeup_(wakeup), rank_(rank) {
  for (size_t i = 0; i < links_.size(); ++i) links_[i].fd = sockets[i].release();
}

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
  // for the send queues to empty first, briefly. A queue that stops
  // shrinking belongs to a peer that reads nothing more (after an abort,
  // for the flush's quiet time): waiting on it would deliver nothing.
  const int64_t until = nowMs() + kLingerMs;
  const int64_t stuckMs = std::min(quietMs_, kLingerMs);
  for (SocketLink& link : links_) {
    if (link.fd < 0) continue;
    int unsent = 0;
    int fewest = std::numeric_limits<int>::max();
    int64_t shrankAt = nowMs();
    while (ioctl(link.fd, SIOCOUTQ, &unsent) == 0 && unsent > 0 && nowMs() < until) {
      if (unsent < fewest) {
        fewest = unsent;
        shrankAt = nowMs();
      } else if (nowMs() - shrankAt >= stuckMs) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    char sink[4096];
    while (recv(link.fd, sink, sizeof(sink), MSG_DONTWAIT) > 0) {
    }
    shutdown(link.fd, SHUT_WR);
    close(link.fd);
    link.fd = -1;
  }
}

void TcpProgress::ringEngine() {
  if (IdleSleep* engine = engine_.load(std::memory_order_acquire)) engine->ring();
}

// After publishing a slot or a freed one: either the engine's last look
// before it sleeps sees the change, or this sees it watching (a full fence
// on both sides, as base/doorbell.h explains).
void TcpProgress::ringIfWatched(const std::atomic<uint32_t>& watched) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (watched.load(std::memory_order_relaxed) != 0) ringEngine();
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

void TcpProgress::run() {
  std::vector<pollfd> fds;
  std::vector<size_t> linkOf;
  // A stop flushes until nothing was sent for quietMs_. Only sends count:
  // what arrives (a third rank's heartbeats every 50 ms) says nothing of
  // whether the peers take this rank's last frames, and would keep an
  // abort flushing for as long as they beat.
  int64_t lastSent = nowMs();
  std::unique_lock<std::mutex> lock(io_);
  for (;;) {
    bool sent = false;
    for (SocketLink& link : links_)
      if (link.fd >= 0 && !link.wantsOut) sent |= pumpWriter(link);
    bool moved = sent;
    const bool stopping = stopping_.load(std::memory_order_acquire);
    for (SocketLink& link : links_)
      if (link.fd >= 0 && link.stalled && (stopping || roomFor(link))) moved |= pumpReader(link);
    if (sent) lastSent = nowMs();
    if (stopping_.load(std::memory_order_acquire) && (everythingSent() || nowMs() - lastSent >= quietMs_)) return;

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
      if (!pollFailing_)
        LOOM_WARN("TCP", rank_, "poll failed in the TCP progress thread: " << std::strerror(errno) << "; retrying");
      pollFailing_ = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    pollFailing_ = false;
    if (fds.back().revents != 0) wakeup_.drain();
    for (size_t i = 0; i + 1 < fds.size(); ++i) {
      SocketLink& link = links_[linkOf[i]];
      // The engine may have closed the socket during the poll (a failure
      // it met sending), and the number may already name another file.
      if (link.fd != fds[i].fd || fds[i].revents == 0) continue;
      if ((fds[i].revents & POLLOUT) && link.wantsOut) {
        link.wantsOut = false;
        sent |= pumpWriter(link);
      }
      // The engine may have read what the poll saw: pumpReader then finds
      // nothing and returns.
      if (link.fd >= 0 && threadReads(link) && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) pumpReader(link);
    }
    if (sent) lastSent = nowMs();
  }
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
  LOOM_INFO("TCP", rank_, sentence);
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

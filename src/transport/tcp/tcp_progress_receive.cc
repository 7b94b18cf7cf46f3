// TcpProgress's receiving half: frames read straight into the slot the
// engine will read, a ring that is full stalls its socket until the engine
// releases a slot, every header is checked before its payload is read, and
// a close between frames is told from one that cut a message short.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transport/tcp/tcp_progress.h"

namespace loom::tcp {

bool TcpProgress::roomFor(const SocketLink& link) const {
  const uint64_t slots = static_cast<uint64_t>(link.recv->memory.geometry().slots);
  return link.inHeader.number - link.recv->released.load(std::memory_order_acquire) < slots;
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
          case Received::kClosed:
            // Between frames a close is the peer's last word; within a
            // header, as within a payload, it cut a message short.
            if (link.inHeaderDone == 0)
              endLink(link);
            else
              breakPeer(link.peer, cutShort(link.peer));
            return true;
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
        case Received::kClosed: breakPeer(link.peer, cutShort(link.peer)); return true;
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

std::string TcpProgress::cutShort(size_t peer) const {
  return peers_[peer].name.describe() +
         " closed its connection in the middle of a message (it exited, or aborted its communicator)";
}

void TcpProgress::finishFrame(SocketLink& link) {
  PeerState& state = *peers_[link.peer].state;
  switch (link.inHeader.kind) {
    case FrameKind::kData:
      link.recv->bytes[link.inHeader.number % link.recv->bytes.size()] =
          link.inHeader.bytes - static_cast<uint32_t>(sizeof(MessageLabel));
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

}  // namespace loom::tcp

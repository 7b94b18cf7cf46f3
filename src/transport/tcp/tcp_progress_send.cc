// TcpProgress's sending half: frames out of the send rings (and straight
// from the engine's source when the socket is idle), control frames ahead
// of data on a peer's first socket, and what a failed send means.
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "transport/tcp/tcp_progress.h"

namespace loom::tcp {

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

}  // namespace loom::tcp

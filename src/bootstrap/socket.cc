#include "bootstrap/socket.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "base/error.h"

namespace loom::bootstrap {

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

void Socket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string Endpoint::toString() const {
  const std::string host = address.toString();
  return (address.isIpv6() ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

namespace {

// The kernel caps both at net.core.wmem_max / rmem_max without an error;
// the caller reads back what it got.
void setBufferBytes(int fd, int bytes) {
  if (bytes <= 0) return;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof(bytes));
}

}  // namespace

Socket listenTcp(const Endpoint& on, uint16_t* boundPort, int bufferBytes) {
  Socket sock(::socket(on.address.family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) failSystem("socket (to listen on " + on.toString() + ")", errno);
  int one = 1;
  setsockopt(sock.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  setBufferBytes(sock.fd(), bufferBytes);
  sockaddr_storage addr{};
  socklen_t len = toSockaddr(on.address, on.port, &addr);
  if (bind(sock.fd(), reinterpret_cast<sockaddr*>(&addr), len) != 0)
    failSystem("cannot listen on " + on.toString(), errno);
  if (listen(sock.fd(), 1024) != 0) failSystem("listen", errno);
  len = sizeof(addr);
  getsockname(sock.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
  uint16_t port = 0;
  fromSockaddr(reinterpret_cast<sockaddr*>(&addr), &port);
  if (boundPort != nullptr) *boundPort = port;
  return sock;
}

namespace {

// One attempt, waited for no later than the deadline: a blocking connect
// to an address whose packets are dropped (a firewall, a host that is
// gone) would wait for the kernel's SYN retries, two minutes, whatever
// the caller's timeout. Returns 0 or why it failed (ETIMEDOUT: no answer).
int connectOnce(int fd, const sockaddr_storage& addr, socklen_t len, const Deadline& deadline) {
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    if (errno != EINPROGRESS) return errno;
    for (;;) {
      pollfd p{fd, POLLOUT, 0};
      const int rc = poll(&p, 1, static_cast<int>(deadline.remainingMs(100)));
      if (rc > 0) break;
      if (rc < 0 && errno != EINTR) return errno;
      if (deadline.expired()) return ETIMEDOUT;
    }
    int error = 0;
    socklen_t errorLen = sizeof(error);
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &errorLen) != 0) return errno;
    if (error != 0) return error;
  }
  fcntl(fd, F_SETFL, flags);  // callers wait with poll and MSG_DONTWAIT, as before
  return 0;
}

}  // namespace

Socket connectTcp(const Endpoint& to, const Deadline& deadline, const char* what, int bufferBytes) {
  sockaddr_storage addr{};
  const socklen_t len = toSockaddr(to.address, to.port, &addr);
  const auto start = std::chrono::steady_clock::now();
  int lastError = 0;
  do {
    Socket sock(::socket(to.address.family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!sock.valid()) failSystem(std::string("socket (to connect to ") + what + " at " + to.toString() + ")", errno);
    setBufferBytes(sock.fd(), bufferBytes);
    lastError = connectOnce(sock.fd(), addr, len, deadline);
    if (lastError == 0) {
      int one = 1;
      setsockopt(sock.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return sock;
    }
    // Refused: the listener may not be up yet. Unreachable: a link may be
    // coming up. Both are retried until the deadline; the rest are final.
    if (lastError != ECONNREFUSED && lastError != ETIMEDOUT && lastError != EINTR && lastError != ENETUNREACH &&
        lastError != EHOSTUNREACH && lastError != ECONNRESET)
      break;
    if (!deadline.expired()) std::this_thread::sleep_for(std::chrono::milliseconds(deadline.remainingMs(20)));
  } while (!deadline.expired());
  const std::string where = std::string("cannot connect to ") + what + " at " + to.toString();
  if (lastError == ETIMEDOUT) {
    const auto waited =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    fail(loomTimeout, where + ": no answer in " + std::to_string(waited) +
                          " ms (is the address right, and does a firewall drop the packets?)");
  }
  fail(lastError == ECONNREFUSED ? loomTimeout : loomSystemError, where + ": " + std::strerror(lastError));
}

bool waitReadable(int fd, const Deadline& deadline) {
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    int rc = poll(&p, 1, static_cast<int>(deadline.remainingMs(100)));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) failSystem("poll", errno);
    if (deadline.expired()) return false;
  }
}

void sendAll(int fd, const void* data, size_t size, const Deadline& deadline, const std::string& what) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, bytes, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      bytes += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, static_cast<int>(deadline.remainingMs(100)));
      if (deadline.expired()) fail(loomTimeout, "timed out sending to " + what);
      continue;
    }
    fail(loomRemoteError, "lost the connection to " + what + " while sending: " + std::strerror(errno));
  }
}

void recvAll(int fd, void* data, size_t size, const Deadline& deadline, const std::string& what) {
  char* bytes = static_cast<char*>(data);
  while (size > 0) {
    if (!waitReadable(fd, deadline)) fail(loomTimeout, "timed out waiting for " + what);
    ssize_t n = ::recv(fd, bytes, size, MSG_DONTWAIT);
    if (n > 0) {
      bytes += n;
      size -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (n == 0) fail(loomRemoteError, what + " closed the connection");
    fail(loomRemoteError, "lost the connection to " + what + ": " + std::strerror(errno));
  }
}

void sendFrame(int fd, const std::string& payload, const Deadline& deadline, const std::string& what) {
  uint64_t length = payload.size();
  sendAll(fd, &length, sizeof(length), deadline, what);
  sendAll(fd, payload.data(), payload.size(), deadline, what);
}

std::string recvFrame(int fd, size_t maxSize, const Deadline& deadline, const std::string& what) {
  uint64_t length = 0;
  recvAll(fd, &length, sizeof(length), deadline, what);
  if (length > maxSize)
    fail(loomRemoteError, what + " sent a message of " + std::to_string(length) + " bytes, more than the " +
                              std::to_string(maxSize) + " allowed: it is not a Loom peer of the same version");
  std::string payload(length, '\0');
  recvAll(fd, payload.data(), payload.size(), deadline, what);
  return payload;
}

bool recvFrameUnlessClosed(int fd, size_t maxSize, const Deadline& deadline, const std::string& what,
                           std::string* payload) {
  char first = 0;
  if (!waitReadable(fd, deadline)) fail(loomTimeout, "timed out waiting for " + what);
  ssize_t n = ::recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && (errno == ECONNRESET || errno == EPIPE))) return false;
  *payload = recvFrame(fd, maxSize, deadline, what);
  return true;
}

}  // namespace loom::bootstrap

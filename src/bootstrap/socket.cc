#include "bootstrap/socket.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
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

std::string ipv4Text(uint32_t ipv4) {
  char text[INET_ADDRSTRLEN] = {};
  in_addr addr{};
  addr.s_addr = ipv4;
  inet_ntop(AF_INET, &addr, text, sizeof(text));
  return text;
}

std::string Endpoint::toString() const {
  return ipv4Text(ipv4) + ":" + std::to_string(port);
}

uint32_t resolveIpv4(const std::string& host, const char* what) {
  in_addr addr{};
  if (inet_pton(AF_INET, host.c_str(), &addr) == 1) return addr.s_addr;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr)
    fail(loomInvalidArgument, std::string(what) + "='" + host +
                                  "' is neither an IPv4 address nor a host name that resolves: " + gai_strerror(rc));
  uint32_t result = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr.s_addr;
  freeaddrinfo(found);
  return result;
}

uint32_t advertisedAddress(const std::string& interfaceName) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) failSystem("getifaddrs", errno);
  uint32_t chosen = 0;
  bool found = false;
  for (ifaddrs* it = list; it != nullptr && !found; it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET) continue;
    if (!(it->ifa_flags & IFF_UP)) continue;
    bool wanted = interfaceName.empty() ? !(it->ifa_flags & IFF_LOOPBACK) : interfaceName == it->ifa_name;
    if (!wanted) continue;
    chosen = reinterpret_cast<sockaddr_in*>(it->ifa_addr)->sin_addr.s_addr;
    found = true;
  }
  freeifaddrs(list);
  if (!found && !interfaceName.empty())
    fail(loomInvalidArgument, "LOOM_SOCKET_IFNAME='" + interfaceName + "' names no up interface with an IPv4 address");
  return found ? chosen : htonl(INADDR_LOOPBACK);
}

Socket listenTcp(const Endpoint& on, uint16_t* boundPort) {
  Socket sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!sock.valid()) failSystem("socket", errno);
  int one = 1;
  setsockopt(sock.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = on.ipv4;
  addr.sin_port = htons(on.port);
  if (bind(sock.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    failSystem("cannot listen on " + on.toString(), errno);
  if (listen(sock.fd(), 1024) != 0) failSystem("listen", errno);
  socklen_t len = sizeof(addr);
  getsockname(sock.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
  if (boundPort != nullptr) *boundPort = ntohs(addr.sin_port);
  return sock;
}

Socket connectTcp(const Endpoint& to, const Deadline& deadline, const char* what) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = to.ipv4;
  addr.sin_port = htons(to.port);
  int lastError = 0;
  do {
    Socket sock(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!sock.valid()) failSystem("socket", errno);
    if (::connect(sock.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
      int one = 1;
      setsockopt(sock.fd(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      return sock;
    }
    lastError = errno;
    if (lastError != ECONNREFUSED && lastError != ETIMEDOUT && lastError != EINTR && lastError != ENETUNREACH &&
        lastError != EHOSTUNREACH && lastError != ECONNRESET)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (!deadline.expired());
  fail(lastError == ECONNREFUSED ? loomTimeout : loomSystemError,
       std::string("cannot connect to ") + what + " at " + to.toString() + ": " + std::strerror(lastError));
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

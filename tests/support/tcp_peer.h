// Raw TCP peers for bootstrap tests: strangers that connect to a rendezvous
// and say nothing or garbage, fake rendezvous servers, and a look at the
// kernel's table of TCP sockets to see what a rendezvous left open.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace loom::test {

inline sockaddr_in ipv4Address(uint32_t ipv4, uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = ipv4;
  addr.sin_port = htons(port);
  return addr;
}

inline uint32_t dotted(const char* text) {
  in_addr addr{};
  inet_pton(AF_INET, text, &addr);
  return addr.s_addr;
}

// Connects; returns the fd, or -errno when the connection failed.
inline int connectTo(uint32_t ipv4, uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -errno;
  sockaddr_in addr = ipv4Address(ipv4, port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int error = errno;
    close(fd);
    return -error;
  }
  return fd;
}

// Reads whatever the other side sends until it closes the connection (true)
// or waitMs passes (false). Appends what arrived to *received.
inline bool readUntilClosed(int fd, int64_t waitMs, std::string* received) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(waitMs);
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    char buffer[4096];
    ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
    if (n == 0) return true;
    if (n < 0) return errno != EINTR && errno != EAGAIN;  // a reset is closed too
    received->append(buffer, static_cast<size_t>(n));
  }
}

// A listener on 127.0.0.1 and a free port, for fake rendezvous servers.
inline int listenOnLoopback(uint16_t* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr = ipv4Address(htonl(INADDR_LOOPBACK), 0);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(fd, 16) != 0) return -1;
  socklen_t length = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length);
  *port = ntohs(addr.sin_port);
  return fd;
}

// The sockets this network namespace holds on local port `port` that a
// process still owns: listening, established, or closed by the peer but not
// yet by us (CLOSE_WAIT, the mark of a leaked descriptor). TIME_WAIT and the
// FIN states belong to the kernel alone and do not count.
inline int socketsHeldOnPort(uint16_t port) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the header
  int held = 0;
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    fields >> slot >> local >> remote >> state;
    const size_t colon = local.find(':');
    if (colon == std::string::npos) continue;
    const unsigned long localPort = std::stoul(local.substr(colon + 1), nullptr, 16);
    const unsigned long st = std::stoul(state, nullptr, 16);
    if (localPort == port && (st == 0x0A || st == 0x01 || st == 0x08)) ++held;
  }
  return held;
}

// Waits (bounded) until nothing is held on `port`; returns how many still are.
inline int waitUntilNothingHeldOnPort(uint16_t port, int64_t waitMs) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(waitMs);
  int held = socketsHeldOnPort(port);
  while (held > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    held = socketsHeldOnPort(port);
  }
  return held;
}

}  // namespace loom::test

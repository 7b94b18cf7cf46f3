// Small blocking TCP helpers for the bootstrap. Every call that can wait
// takes a deadline, so a silent peer becomes loomTimeout, never a hang.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/deadline.h"
#include "bootstrap/ip_address.h"

namespace loom::bootstrap {

// Owns a file descriptor; closes it on destruction.
class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { close(); }

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void close();

 private:
  int fd_ = -1;
};

// An address and a port (host byte order).
struct Endpoint {
  IpAddress address;
  uint16_t port = 0;
  // "198.18.0.1:29500" or "[2001:2::1]:29500".
  std::string toString() const;
};

// Listens on `on`'s address and port (port 0 picks a free one). Returns the
// bound port. `bufferBytes` (0: the kernel's autotuning) sizes SO_SNDBUF and
// SO_RCVBUF of every connection it accepts: set before listen and connect,
// where TCP settles the window scale that the receive buffer needs.
Socket listenTcp(const Endpoint& on, uint16_t* boundPort, int bufferBytes = 0);
// Retries refused connections until the deadline (the listener may not be
// up yet), and waits for none past it, even when nothing answers at all:
// loomTimeout then says "no answer in N ms".
Socket connectTcp(const Endpoint& to, const Deadline& deadline, const char* what, int bufferBytes = 0);
// Waits until fd is readable (true) or the deadline passes (false).
bool waitReadable(int fd, const Deadline& deadline);

// Whole-buffer transfers. A closed peer is loomRemoteError and a passed
// deadline loomTimeout; `what` names the peer in the sentence.
void sendAll(int fd, const void* data, size_t size, const Deadline& deadline, const std::string& what);
void recvAll(int fd, void* data, size_t size, const Deadline& deadline, const std::string& what);

// Length-prefixed messages; a length above maxSize is rejected as corrupt.
void sendFrame(int fd, const std::string& payload, const Deadline& deadline, const std::string& what);
std::string recvFrame(int fd, size_t maxSize, const Deadline& deadline, const std::string& what);
// As recvFrame, but a peer that closed the connection before the frame began
// returns false instead of throwing: for servers, where that is routine.
bool recvFrameUnlessClosed(int fd, size_t maxSize, const Deadline& deadline, const std::string& what,
                           std::string* payload);

}  // namespace loom::bootstrap

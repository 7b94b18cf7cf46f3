#include "transport/tcp/tcp_accept.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <string>

#include "base/error.h"
#include "base/logging.h"
#include "base/rank_list.h"
#include "transport/tcp/tcp_hello.h"

namespace loom::tcp {
namespace {

// Connections waiting to greet, at least: past the cap the oldest is
// dropped, so a flood of silent strangers cannot make the listener stop
// accepting. The cap grows with the ranks' connections still missing, as
// a large job's lower ranks may all be queued at the listener at once.
constexpr size_t kMinPendingCap = 256;

struct Pending {
  bootstrap::Socket socket;
  std::string from;  // "198.18.0.3:40122"
  Deadline helloBy;
  Hello hello{};
  size_t got = 0;
};

// accept4's errors that concern only the connection it was taking (Linux
// reports a new connection's pending network error there): the next one
// may be fine.
bool connectionOnly(int error) {
  return error == EINTR || error == ECONNABORTED || error == EPROTO || error == ENETDOWN || error == ENOPROTOOPT ||
         error == EHOSTDOWN || error == ENONET || error == EHOSTUNREACH || error == EOPNOTSUPP ||
         error == ENETUNREACH || error == EPERM;
}

class Acceptor {
 public:
  Acceptor(int listener, const ExpectedConnections& expected, const Deadline& deadline)
      : listener_(listener), expected_(expected), deadline_(deadline), sockets_(expected.peers.size()) {
    for (auto& peer : sockets_) peer.resize(static_cast<size_t>(expected.socketsPerPeer));
  }

  std::vector<std::vector<bootstrap::Socket>> run() {
    const int wanted = static_cast<int>(expected_.peers.size()) * expected_.socketsPerPeer;
    std::vector<pollfd> fds;
    while (accepted_ < wanted) {
      if (deadline_.expired()) failMissing(wanted);
      std::erase_if(pending_, [](const Pending& pending) { return !pending.socket.valid(); });
      int64_t waitMs = deadline_.remainingMs(100);
      fds.assign(1, pollfd{listener_, POLLIN, 0});
      for (const Pending& pending : pending_) {
        fds.push_back({pending.socket.fd(), POLLIN, 0});
        waitMs = std::min(waitMs, pending.helloBy.remainingMs(waitMs));
      }
      const int ready = poll(fds.data(), fds.size(), static_cast<int>(waitMs));
      if (ready < 0 && errno != EINTR) failSystem("poll (accepting TCP connections)", errno);
      for (size_t i = 1; i < fds.size(); ++i)
        if (ready > 0 && fds[i].revents != 0) readHello(pending_[i - 1]);
      for (Pending& pending : pending_)
        if (pending.socket.valid() && pending.helloBy.expired())
          drop(pending, "it sent no whole hello in " + std::to_string(expected_.helloMs) + " ms");
      if (ready > 0 && fds[0].revents != 0) acceptWaiting();
    }
    return std::move(sockets_);
  }

 private:
  void acceptWaiting() {
    for (;;) {
      sockaddr_storage address{};
      socklen_t length = sizeof(address);
      bootstrap::Socket socket(
          accept4(listener_, reinterpret_cast<sockaddr*>(&address), &length, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (!socket.valid()) {
        const int error = errno;
        if (error == EAGAIN || error == EWOULDBLOCK) return;
        if (connectionOnly(error)) continue;
        // Out of file descriptors or memory: waiting would not help, and
        // the sentence must say so rather than time out.
        const bool noFiles = error == EMFILE || error == ENFILE;
        fail(loomSystemError, "rank " + std::to_string(expected_.rank) +
                                  " cannot accept its peers' TCP connections: " + std::strerror(error) +
                                  (noFiles ? " (it needs a socket per peer, channel and LOOM_SOCKET_NSOCKS: raise "
                                             "the limit on open files, ulimit -n)"
                                           : ""));
      }
      std::erase_if(pending_, [](const Pending& pending) { return !pending.socket.valid(); });
      const size_t cap = pendingCap();
      if (pending_.size() >= cap) {
        drop(pending_.front(), "the listener had " + std::to_string(cap) + " connections yet to greet");
        pending_.pop_front();
      }
      uint16_t port = 0;
      const bootstrap::IpAddress ip = bootstrap::fromSockaddr(reinterpret_cast<sockaddr*>(&address), &port);
      pending_.push_back(
          Pending{std::move(socket), bootstrap::Endpoint{ip, port}.toString(), Deadline::afterMs(expected_.helloMs)});
      // A rank sends its hello right after connecting, so it is usually
      // here already: judged now, its connection holds no place in the queue.
      readHello(pending_.back());
    }
  }

  size_t pendingCap() const {
    const size_t missing =
        expected_.peers.size() * static_cast<size_t>(expected_.socketsPerPeer) - static_cast<size_t>(accepted_);
    return std::max(kMinPendingCap, 2 * missing);
  }

  void readHello(Pending& pending) {
    char* into = reinterpret_cast<char*>(&pending.hello) + pending.got;
    const ssize_t n = recv(pending.socket.fd(), into, sizeof(Hello) - pending.got, MSG_DONTWAIT);
    if (n == 0) return drop(pending, "it closed the connection before its hello");
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      return drop(pending, std::string("it failed before its hello: ") + std::strerror(errno));
    }
    pending.got += static_cast<size_t>(n);
    if (!startsLikeHello(pending.hello, pending.got))
      return drop(pending, "it is not a Loom rank (its first bytes are not a Loom TCP hello)");
    if (pending.got == sizeof(Hello)) judge(pending);
  }

  void judge(Pending& pending) {
    const Hello& hello = pending.hello;
    if (hello.token != expected_.token)
      return drop(pending, "its hello carries another token: a rank of another communicator or job");
    const auto at = std::find(expected_.peers.begin(), expected_.peers.end(), hello.rank);
    if (at == expected_.peers.end())
      return drop(pending, "it says it is rank " + std::to_string(hello.rank) + ", which does not connect to rank " +
                               std::to_string(expected_.rank));
    if (hello.socket < 0 || hello.socket >= expected_.socketsPerPeer)
      return drop(pending, "it says it is socket " + std::to_string(hello.socket) + " of rank " +
                               std::to_string(hello.rank) + ", which has " + std::to_string(expected_.socketsPerPeer));
    bootstrap::Socket& slot = sockets_[static_cast<size_t>(at - expected_.peers.begin())][hello.socket];
    if (slot.valid())
      return drop(pending, "rank " + std::to_string(hello.rank) + "'s socket " + std::to_string(hello.socket) +
                               " is connected already");
    const int on = 1;
    setsockopt(pending.socket.fd(), IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    slot = std::move(pending.socket);
    ++accepted_;
  }

  void drop(Pending& pending, const std::string& why) {
    LOOM_WARN("TCP", expected_.rank,
              "dropped a connection from " << pending.from << " to this rank's TCP listener: " << why);
    pending.socket.close();
  }

  [[noreturn]] void failMissing(int wanted) const {
    std::vector<int> missing;
    for (size_t i = 0; i < expected_.peers.size(); ++i)
      if (std::any_of(sockets_[i].begin(), sockets_[i].end(), [](const auto& s) { return !s.valid(); }))
        missing.push_back(expected_.peers[i]);
    fail(loomTimeout, "rank " + std::to_string(expected_.rank) + " waited " + std::to_string(expected_.timeoutMs) +
                          " ms for the TCP connections of " + describeRanks(missing) + " (" +
                          std::to_string(accepted_) + " of " + std::to_string(wanted) + " arrived)");
  }

  const int listener_;
  const ExpectedConnections& expected_;
  const Deadline deadline_;
  std::vector<std::vector<bootstrap::Socket>> sockets_;
  std::deque<Pending> pending_;
  int accepted_ = 0;
};

}  // namespace

std::vector<std::vector<bootstrap::Socket>> acceptPeers(int listener, const ExpectedConnections& expected,
                                                        const Deadline& deadline) {
  fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK);
  return Acceptor(listener, expected, deadline).run();
}

}  // namespace loom::tcp

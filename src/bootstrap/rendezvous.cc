#include "bootstrap/rendezvous.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>
#include <thread>

#include "bootstrap/auth.h"
#include "base/error.h"
#include "core/logging.h"

namespace loom::bootstrap {
namespace {

constexpr size_t kMaxRoundPayload = 1 << 20;
constexpr int64_t kAdmissionTimeoutMs = 10000;  // one peer may not stall admission longer
constexpr char kOk = 'O';
constexpr char kRefused = 'E';

struct Hello {
  int32_t rank;
  int32_t nranks;
};

std::string describePeer(int fd) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "an unknown peer";
  return Endpoint{addr.sin_addr.s_addr, ntohs(addr.sin_port)}.toString();
}

void refuse(int fd, const std::string& why) {
  try {
    sendFrame(fd, std::string(1, kRefused) + why, Deadline::afterMs(1000), "a refused peer");
  } catch (const Error&) {
  }
}

class Rendezvous {
 public:
  Rendezvous(Socket listener, const Secret& secret, int64_t waitForRanksMs)
      : listener_(std::move(listener)), secret_(secret), waitForRanksMs_(waitForRanksMs) {}

  void run() {
    try {
      if (!admitAllRanks()) return;
      while (serveOneRound()) {
      }
    } catch (const Error& e) {
      LOOM_WARN("BOOTSTRAP", -1, "rendezvous stopped: " << e.what());
    }
  }

 private:
  // Returns false when the ranks did not all arrive in time.
  bool admitAllRanks() {
    Deadline deadline = Deadline::afterMs(waitForRanksMs_);
    int admitted = 0;
    while (nranks_ < 0 || admitted < nranks_) {
      if (!waitReadable(listener_.fd(), deadline)) {
        LOOM_WARN("BOOTSTRAP", -1,
                  "rendezvous gave up: " << admitted << " of " << (nranks_ < 0 ? 0 : nranks_)
                                         << " ranks arrived within " << waitForRanksMs_ << " ms");
        return false;
      }
      Socket peer(accept4(listener_.fd(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!peer.valid()) continue;
      try {
        if (admit(std::move(peer))) ++admitted;
      } catch (const Error& e) {
        LOOM_WARN("BOOTSTRAP", -1, "rendezvous dropped a peer during admission: " << e.what());
      }
    }
    listener_.close();  // nobody else may join this communicator
    return true;
  }

  bool admit(Socket peer) {
    const std::string who = describePeer(peer.fd());
    Deadline deadline = Deadline::afterMs(kAdmissionTimeoutMs);
    Nonce nonce = randomNonce();
    sendAll(peer.fd(), nonce.data(), nonce.size(), deadline, who);
    Proof proof;
    recvAll(peer.fd(), proof.data(), proof.size(), deadline, who);
    if (!proofMatches(secret_, nonce, proof)) {
      LOOM_WARN("BOOTSTRAP", -1,
                "refused bootstrap peer " << who << ": it could not prove it holds the unique id's secret");
      refuse(peer.fd(), "the rendezvous refused this peer: wrong secret (a unique id from another run?)");
      return false;
    }
    Hello hello;
    recvAll(peer.fd(), &hello, sizeof(hello), deadline, who);
    std::string problem;
    if (hello.nranks < 1)
      problem = "nranks " + std::to_string(hello.nranks) + " is not positive";
    else if (nranks_ >= 0 && hello.nranks != nranks_)
      problem = "this rank says nranks is " + std::to_string(hello.nranks) + " but the first rank to arrive said " +
                std::to_string(nranks_);
    else if (hello.rank < 0 || hello.rank >= hello.nranks)
      problem = "rank " + std::to_string(hello.rank) + " is not in [0, " + std::to_string(hello.nranks) + ")";
    else if (nranks_ >= 0 && ranks_[hello.rank].valid())
      problem = "rank " + std::to_string(hello.rank) + " has already joined (two processes use the same rank)";
    if (!problem.empty()) {
      LOOM_WARN("BOOTSTRAP", -1, "refused bootstrap peer " << who << ": " << problem);
      refuse(peer.fd(), problem);
      return false;
    }
    if (nranks_ < 0) {
      nranks_ = hello.nranks;
      ranks_.resize(nranks_);
    }
    ranks_[hello.rank] = std::move(peer);
    return true;
  }

  // Returns false when every rank has left.
  bool serveOneRound() {
    std::vector<std::string> contributions(nranks_);
    std::vector<bool> received(nranks_, false);
    int pending = 0;
    for (int r = 0; r < nranks_; ++r)
      if (ranks_[r].valid()) ++pending;
    int departedRank = -1;
    while (pending > 0) {
      std::vector<pollfd> fds;
      std::vector<int> rankOf;
      for (int r = 0; r < nranks_; ++r) {
        if (ranks_[r].valid() && !received[r]) {
          fds.push_back({ranks_[r].fd(), POLLIN, 0});
          rankOf.push_back(r);
        }
      }
      if (poll(fds.data(), fds.size(), -1) < 0) continue;
      for (size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        int r = rankOf[i];
        bool arrived = false;
        try {
          arrived = recvFrameUnlessClosed(ranks_[r].fd(), kMaxRoundPayload, Deadline::afterMs(kAdmissionTimeoutMs),
                                          "rank " + std::to_string(r), &contributions[r]);
        } catch (const Error& e) {
          LOOM_WARN("BOOTSTRAP", -1, "rendezvous dropped rank " << r << ": " << e.what());
        }
        if (arrived) {
          received[r] = true;
        } else {
          ranks_[r].close();  // the rank destroyed its communicator, or died
          departedRank = r;
        }
        --pending;
      }
    }
    bool anyoneWaiting = false;
    for (int r = 0; r < nranks_; ++r) anyoneWaiting |= received[r];
    if (!anyoneWaiting) return false;

    std::string reply;
    if (departedRank >= 0) {
      reply = std::string(1, kRefused) + "rank " + std::to_string(departedRank) +
              " left the communicator (destroyed it or exited) while the others were still exchanging setup data";
    } else {
      reply.push_back(kOk);
      for (const std::string& c : contributions) {
        uint64_t length = c.size();
        reply.append(reinterpret_cast<const char*>(&length), sizeof(length));
        reply.append(c);
      }
    }
    for (int r = 0; r < nranks_; ++r) {
      if (!received[r]) continue;
      try {
        sendFrame(ranks_[r].fd(), reply, Deadline::afterMs(kAdmissionTimeoutMs), "rank " + std::to_string(r));
      } catch (const Error&) {
        ranks_[r].close();
      }
    }
    return true;
  }

  Socket listener_;
  Secret secret_;
  int64_t waitForRanksMs_;
  int nranks_ = -1;
  std::vector<Socket> ranks_;
};

}  // namespace

Endpoint startRendezvous(const Secret& secret, const Endpoint& listenOn, int64_t waitForRanksMs) {
  uint16_t bound = 0;
  Socket listener = listenTcp(listenOn, &bound);
  auto* rendezvous = new Rendezvous(std::move(listener), secret, waitForRanksMs);
  std::thread([rendezvous] {
    rendezvous->run();
    delete rendezvous;
  }).detach();
  return Endpoint{listenOn.ipv4, bound};
}

RendezvousClient::RendezvousClient(const RendezvousAddress& address, int rank, int nranks, int64_t timeoutMs)
    : rank_(rank),
      nranks_(nranks),
      timeoutMs_(timeoutMs),
      peerName_("the rendezvous at " + address.endpoint.toString()) {
  Deadline deadline = Deadline::afterMs(timeoutMs);
  socket_ =
      connectTcp(address.endpoint, deadline, "the rendezvous (the process that called loomGetUniqueId, or rank 0)");
  Nonce nonce;
  recvAll(socket_.fd(), nonce.data(), nonce.size(), deadline, peerName_);
  Proof proof = proveSecret(address.secret, nonce);
  sendAll(socket_.fd(), proof.data(), proof.size(), deadline, peerName_);
  Hello hello{rank, nranks};
  sendAll(socket_.fd(), &hello, sizeof(hello), deadline, peerName_);
}

std::vector<std::string> RendezvousClient::allGather(const std::string& mine) {
  std::lock_guard<std::mutex> lock(mutex_);
  Deadline deadline = Deadline::afterMs(timeoutMs_);
  sendFrame(socket_.fd(), mine, deadline, peerName_);
  std::string reply;
  try {
    reply = recvFrame(socket_.fd(), kMaxRoundPayload * (nranks_ + 1), deadline, peerName_);
  } catch (const Error& e) {
    if (e.code() == loomTimeout)
      fail(loomTimeout, "rank " + std::to_string(rank_) + " waited " + std::to_string(timeoutMs_) +
                            " ms for the other ranks to reach the same setup step; some rank did not arrive");
    throw;
  }
  return decodeRound(reply, nranks_, peerName_);
}

std::vector<std::string> decodeRound(const std::string& reply, int nranks, const std::string& peerName) {
  if (reply.empty()) fail(loomRemoteError, peerName + " sent an empty reply");
  if (reply[0] == kRefused) fail(loomRemoteError, "bootstrap: " + reply.substr(1));
  if (reply[0] != kOk) fail(loomRemoteError, peerName + " sent a reply that is neither a round nor a refusal");
  std::vector<std::string> all;
  size_t at = 1;
  for (int r = 0; r < nranks; ++r) {
    uint64_t length = 0;
    if (reply.size() - at < sizeof(length)) fail(loomRemoteError, peerName + " sent a truncated round");
    std::memcpy(&length, reply.data() + at, sizeof(length));
    at += sizeof(length);
    if (reply.size() - at < length) fail(loomRemoteError, peerName + " sent a truncated round");
    all.emplace_back(reply.data() + at, length);
    at += length;
  }
  if (at != reply.size()) fail(loomRemoteError, peerName + " sent a round with trailing bytes");
  return all;
}

}  // namespace loom::bootstrap

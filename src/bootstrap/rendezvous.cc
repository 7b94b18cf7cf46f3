#include "bootstrap/rendezvous.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>
#include <thread>

#include "base/error.h"
#include "bootstrap/auth.h"
#include "bootstrap/handshake.h"
#include "core/logging.h"

namespace loom::bootstrap {
namespace {

constexpr size_t kMaxRoundPayload = 1 << 20;
// An admitted rank may take this long to send the rest of a round it began.
constexpr int64_t kRoundFrameMs = 10000;
constexpr char kOk = 'O';
constexpr char kRefused = 'E';

class Rendezvous {
 public:
  Rendezvous(Socket listener, const Secret& secret, int64_t waitForRanksMs, const AdmissionLimits& limits,
             std::string where)
      : listener_(std::move(listener)),
        secret_(secret),
        waitForRanksMs_(waitForRanksMs),
        limits_(limits),
        where_(std::move(where)) {}

  void run() {
    try {
      ranks_ = admitRanks(listener_.fd(), secret_, waitForRanksMs_, limits_, where_);
      listener_.close();  // nobody else may join this communicator
      if (ranks_.empty()) return;
      nranks_ = static_cast<int>(ranks_.size());
      while (serveOneRound()) {
      }
    } catch (const std::exception& e) {
      // Nothing may escape a detached thread: that would end the process.
      LOOM_WARN("BOOTSTRAP", -1, where_ << " stopped: " << e.what());
    }
  }

 private:
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
          arrived = recvFrameUnlessClosed(ranks_[r].fd(), kMaxRoundPayload, Deadline::afterMs(kRoundFrameMs),
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
    // Rank 0 last: rank 0 usually runs in this process (an environment
    // launch's rank 0, a split's first member, the rank that called
    // loomGetUniqueId), and once it has its reply it may finish init and
    // exit, ending this thread mid-loop. Replies already sent are in the
    // kernel's buffers by then and still reach their ranks.
    for (int i = 1; i <= nranks_; ++i) {
      const int r = i % nranks_;
      if (!received[r]) continue;
      try {
        sendFrame(ranks_[r].fd(), reply, Deadline::afterMs(kRoundFrameMs), "rank " + std::to_string(r));
      } catch (const Error&) {
        ranks_[r].close();
      }
    }
    return true;
  }

  Socket listener_;
  Secret secret_;
  int64_t waitForRanksMs_;
  AdmissionLimits limits_;
  std::string where_;
  int nranks_ = 0;
  std::vector<Socket> ranks_;
};

}  // namespace

Endpoint startRendezvous(const Secret& secret, const Endpoint& listenOn, int64_t waitForRanksMs,
                         const AdmissionLimits& limits) {
  uint16_t bound = 0;
  Socket listener = listenTcp(listenOn, &bound);
  const Endpoint endpoint{listenOn.ipv4, bound};
  auto* rendezvous =
      new Rendezvous(std::move(listener), secret, waitForRanksMs, limits, "the rendezvous at " + endpoint.toString());
  std::thread([rendezvous] {
    rendezvous->run();
    delete rendezvous;
  }).detach();
  return endpoint;
}

RendezvousClient::RendezvousClient(const RendezvousAddress& address, int rank, int nranks, int64_t timeoutMs)
    : rank_(rank),
      nranks_(nranks),
      timeoutMs_(timeoutMs),
      peerName_("the rendezvous at " + address.endpoint.toString()) {
  const Deadline deadline = Deadline::afterMs(timeoutMs);
  for (int attempt = 1;; ++attempt) {
    socket_ =
        connectTcp(address.endpoint, deadline, "the rendezvous (the process that called loomGetUniqueId, or rank 0)");
    const Verdict verdict = askToJoin(address.secret, deadline);
    if (verdict.kind == VerdictKind::kAdmitted) return;
    if (verdict.kind == VerdictKind::kRefused)
      fail(loomRemoteError, "rank " + std::to_string(rank) + " could not join: " + verdict.reason);
    // Dropped before it could prove anything (a flood of strangers, or this
    // process stalled): a fresh connection gets a fresh chance.
    LOOM_INFO("BOOTSTRAP", rank, verdict.reason << "; connecting again (attempt " << attempt + 1 << ")");
    if (deadline.expired())
      fail(loomTimeout, "rank " + std::to_string(rank) + " could not join within " + std::to_string(timeoutMs) +
                            " ms: " + verdict.reason);
    std::this_thread::sleep_for(std::chrono::milliseconds(attempt < 10 ? 10 * attempt : 100));
  }
}

Verdict RendezvousClient::askToJoin(const Secret& secret, const Deadline& deadline) {
  std::string greeting(kGreetingSize, '\0');
  recvAll(socket_.fd(), greeting.data(), kHeaderSize, deadline, peerName_);
  std::string versionProblem;
  try {
    checkGreetingHeader(greeting.substr(0, kHeaderSize));
  } catch (const Error& e) {
    if (!startsAsGreeting(greeting))
      fail(loomRemoteError, peerName_ + " is not a Loom rendezvous: " + e.what() +
                                " (do MASTER_ADDR and MASTER_PORT, or the unique id, point at the right process?)");
    versionProblem = e.what();
  }
  Hello hello;
  hello.rank = rank_;
  hello.nranks = nranks_;
  if (versionProblem.empty()) {
    recvAll(socket_.fd(), greeting.data() + kHeaderSize, kGreetingSize - kHeaderSize, deadline, peerName_);
    hello.proof = proveSecret(secret, decodeGreeting(greeting).nonce);
  }
  sendAll(socket_.fd(), encodeHello(hello).data(), kHelloSize, deadline, peerName_);
  // A rendezvous of another version cannot judge this hello as its own, but
  // it sees it, and logs which peer came with which version.
  if (!versionProblem.empty()) fail(loomRemoteError, peerName_ + " cannot admit this rank: " + versionProblem);
  std::string verdict;
  try {
    verdict = recvFrame(socket_.fd(), kMaxVerdictSize, deadline, peerName_);
  } catch (const Error& e) {
    if (e.code() == loomTimeout)
      fail(loomTimeout, "rank " + std::to_string(rank_) + " waited " + std::to_string(timeoutMs_) + " ms for " +
                            peerName_ + " to admit it");
    throw;
  }
  try {
    return decodeVerdict(verdict);
  } catch (const Error& e) {
    fail(loomRemoteError, peerName_ + " sent no verdict on this rank that Loom can read: " + e.what());
  }
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

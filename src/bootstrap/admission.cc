#include "bootstrap/admission.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include "base/error.h"
#include "base/logging.h"
#include "base/rank_list.h"
#include "bootstrap/auth.h"
#include "bootstrap/handshake.h"

namespace loom::bootstrap {
namespace {

// Refusals logged at WARN per rendezvous before the rest go to INFO: a
// misconfigured rank is seen at the default level, a flood does not bury
// the log.
constexpr int kRefusalsWarned = 8;
// Connections taken per wake-up, so a burst of them cannot starve the
// hellos already arriving.
constexpr int kAcceptsPerWake = 64;
// The most ranks one rendezvous serves (as many as a launcher's variables
// may name): the first hello sizes a table by its nranks.
constexpr int32_t kMaxRanks = 1 << 24;
// How long to stop accepting when the process has no file descriptor left
// and no stranger to drop for one.
constexpr int64_t kOutOfDescriptorsPauseMs = 100;

// A connection that has not proven the secret yet.
struct Waiting {
  Socket socket;
  std::string who;       // the peer's address and port
  Nonce nonce;           // this connection's challenge
  std::string received;  // its hello so far, never more than kHelloSize
  Deadline deadline;     // for the whole hello
};

enum class Severity { kMisconfiguredRank, kStranger };

class Admission {
 public:
  Admission(int listener, const Secret& secret, const AdmissionLimits& limits, const std::string& where)
      : listener_(listener), secret_(secret), limits_(limits), where_(where) {}

  AdmittedRanks run(int64_t waitForRanksMs) {
    const Deadline overall = Deadline::afterMs(waitForRanksMs);
    while (!complete()) {
      if (admitted_ == 0 && overall.expired()) return giveUp(std::to_string(waitForRanksMs) + " ms");
      if (admitted_ > 0 && (patience_.expired() || overall.expired()))
        return giveUp(std::to_string(patienceMs_) + " ms (the timeout of rank " + std::to_string(patientRank_) + ")");
      dropLateHellos();
      serveOnce(overall);
      std::erase_if(waiting_, [](const Waiting& w) { return !w.socket.valid(); });
    }
    for (Waiting& w : waiting_)
      sendVerdictAndClose(w, Verdict{VerdictKind::kRefused, "every rank of this communicator has already joined"},
                          Severity::kStranger, "every rank had joined");
    return AdmittedRanks{std::move(ranks_), std::move(timeoutsMs_), std::string()};
  }

 private:
  bool complete() const { return nranks_ > 0 && admitted_ == nranks_; }

  // One poll over the listener and every waiting connection, then whatever
  // became readable.
  void serveOnce(const Deadline& overall) {
    const bool accepting = resumeAccepting_.expired();
    std::vector<pollfd> fds;
    if (accepting) fds.push_back({listener_, POLLIN, 0});
    const size_t firstWaiting = fds.size();
    for (const Waiting& w : waiting_) fds.push_back({w.socket.fd(), POLLIN, 0});
    if (poll(fds.data(), fds.size(), static_cast<int>(nextWakeMs(overall))) < 0) {
      if (errno == EINTR) return;
      failSystem("poll in the rendezvous", errno);
    }
    // Indexes into waiting_ stay valid: nothing is added or erased until
    // every readable connection has been read.
    for (size_t i = 0; i < fds.size() - firstWaiting; ++i)
      if (fds[firstWaiting + i].revents != 0) readHello(waiting_[i]);
    if (accepting && fds[0].revents != 0 && !complete()) acceptNewcomers();
  }

  int64_t nextWakeMs(const Deadline& overall) const {
    int64_t ms = overall.remainingMs(1000);
    if (admitted_ > 0) ms = patience_.remainingMs(ms);
    for (const Waiting& w : waiting_) ms = w.deadline.remainingMs(ms);
    if (!resumeAccepting_.expired()) ms = resumeAccepting_.remainingMs(ms);
    return ms;
  }

  void acceptNewcomers() {
    for (int i = 0; i < kAcceptsPerWake; ++i) {
      sockaddr_storage from{};
      socklen_t length = sizeof(from);
      Socket peer(accept4(listener_, reinterpret_cast<sockaddr*>(&from), &length, SOCK_CLOEXEC));
      if (!peer.valid()) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          if (freeADescriptor(errno)) continue;
          return;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK)
          LOOM_INFO("BOOTSTRAP", -1, where_ << " could not accept a connection: " << std::strerror(errno));
        return;
      }
      if (openWaiting() >= limits_.maxWaiting) dropOldestWaiting();
      uint16_t port = 0;
      const IpAddress address = fromSockaddr(reinterpret_cast<const sockaddr*>(&from), &port);
      greet(std::move(peer), Endpoint{address, port}.toString());
    }
  }

  // Frees a descriptor by dropping the longest-waiting stranger (true), or,
  // with none to drop, stops accepting for a moment instead of spinning on a
  // listener that stays readable (false).
  bool freeADescriptor(int error) {
    if (openWaiting() > 0) {
      dropOldestWaiting();
      return true;
    }
    if (!warnedOutOfDescriptors_)
      LOOM_WARN("BOOTSTRAP", -1,
                where_ << " cannot accept connections: " << std::strerror(error) << "; it tries again every "
                       << kOutOfDescriptorsPauseMs << " ms");
    warnedOutOfDescriptors_ = true;
    resumeAccepting_ = Deadline::afterMs(kOutOfDescriptorsPauseMs);
    return false;
  }

  void greet(Socket peer, std::string who) {
    Waiting w{std::move(peer), std::move(who), randomNonce(), std::string(), Deadline::afterMs(limits_.helloMs)};
    // A fresh connection's send buffer takes the greeting whole.
    const std::string greeting = encodeGreeting(Greeting{kProtocolVersion, w.nonce});
    if (::send(w.socket.fd(), greeting.data(), greeting.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
        static_cast<ssize_t>(greeting.size())) {
      LOOM_INFO("BOOTSTRAP", -1, where_ << " lost " << w.who << " before greeting it");
      return;
    }
    waiting_.push_back(std::move(w));
  }

  void readHello(Waiting& w) {
    if (!w.socket.valid()) return;
    char bytes[kHelloSize];
    const size_t wanted = kHelloSize - w.received.size();
    const ssize_t n = ::recv(w.socket.fd(), bytes, wanted, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
      LOOM_INFO("BOOTSTRAP", -1,
                where_ << " lost " << w.who << " after " << w.received.size() << " of the " << kHelloSize
                       << " bytes of a hello: " << (n == 0 ? "it closed the connection" : std::strerror(errno)));
      w.socket.close();
      return;
    }
    const bool hadHeader = w.received.size() >= kHeaderSize;
    w.received.append(bytes, static_cast<size_t>(n));
    if (!hadHeader && w.received.size() >= kHeaderSize) {
      try {
        checkHelloHeader(w.received);
      } catch (const Error& e) {
        // A Loom of another version is a rank someone means to run; bytes
        // that are not Loom at all are a stranger's.
        sendVerdictAndClose(w, Verdict{VerdictKind::kRefused, e.what()},
                            startsAsHello(w.received) ? Severity::kMisconfiguredRank : Severity::kStranger, e.what());
        return;
      }
    }
    if (w.received.size() == kHelloSize) judge(w);
  }

  void judge(Waiting& w) {
    const Hello hello = decodeHello(w.received);
    if (!proofMatches(secret_, w.nonce, hello.proof)) {
      refuseRank(w,
                 "wrong secret: it could not prove it holds this communicator's secret (a unique id, or a "
                 "LOOM_SECRET, from another run?)");
      return;
    }
    if (hello.nranks < 1 || hello.nranks > kMaxRanks) {
      refuseRank(w, "nranks " + std::to_string(hello.nranks) + " is not in [1, " + std::to_string(kMaxRanks) + "]");
      return;
    }
    if (nranks_ > 0 && hello.nranks != nranks_) {
      refuseRank(w, "this rank says nranks is " + std::to_string(hello.nranks) + " but the first rank to arrive said " +
                        std::to_string(nranks_));
      return;
    }
    if (hello.timeoutMs < 1) {
      refuseRank(w, "its timeout of " + std::to_string(hello.timeoutMs) + " ms is not positive");
      return;
    }
    if (hello.rank < 0 || hello.rank >= hello.nranks) {
      refuseRank(w, "rank " + std::to_string(hello.rank) + " is not in [0, " + std::to_string(hello.nranks) + ")");
      return;
    }
    if (nranks_ > 0 && ranks_[hello.rank].valid()) {
      refuseRank(w, "rank " + std::to_string(hello.rank) + " has already joined (two processes use the same rank)");
      return;
    }
    if (nranks_ < 0) {
      nranks_ = hello.nranks;
      ranks_.resize(nranks_);
      timeoutsMs_.resize(nranks_, 0);
    }
    try {
      sendFrame(w.socket.fd(), encodeVerdict(Verdict{VerdictKind::kAdmitted, ""}), Deadline::afterMs(1000), w.who);
    } catch (const Error&) {
      LOOM_INFO("BOOTSTRAP", -1, where_ << " lost rank " << hello.rank << " (" << w.who << ") as it admitted it");
      w.socket.close();
      return;
    }
    LOOM_TRACE("BOOTSTRAP", -1, where_ << " admitted rank " << hello.rank << " of " << nranks_ << " from " << w.who);
    ranks_[hello.rank] = std::move(w.socket);
    timeoutsMs_[hello.rank] = hello.timeoutMs;
    const Deadline patience = Deadline::afterMs(hello.timeoutMs);
    if (admitted_ == 0 || patience.isBefore(patience_)) {
      patience_ = patience;
      patienceMs_ = hello.timeoutMs;
      patientRank_ = hello.rank;
    }
    ++admitted_;
  }

  void refuseRank(Waiting& w, const std::string& reason) {
    sendVerdictAndClose(w, Verdict{VerdictKind::kRefused, reason}, Severity::kMisconfiguredRank, reason);
  }

  void dropLateHellos() {
    for (Waiting& w : waiting_) {
      if (!w.socket.valid() || !w.deadline.expired()) continue;
      const std::string why = "it sent " + std::to_string(w.received.size()) + " of the " + std::to_string(kHelloSize) +
                              " bytes of a hello within " + std::to_string(limits_.helloMs) + " ms";
      sendVerdictAndClose(w, Verdict{VerdictKind::kTryAgain, why}, Severity::kStranger, why);
    }
  }

  void dropOldestWaiting() {
    for (Waiting& w : waiting_) {
      if (!w.socket.valid()) continue;
      const std::string why = "it was the longest waiting of " + std::to_string(limits_.maxWaiting) +
                              " connections yet to prove the secret when another arrived";
      sendVerdictAndClose(w, Verdict{VerdictKind::kTryAgain, why}, Severity::kStranger, why);
      return;
    }
  }

  size_t openWaiting() const {
    size_t open = 0;
    for (const Waiting& w : waiting_) open += w.socket.valid() ? 1 : 0;
    return open;
  }

  // Logs who is refused and why, then tells the peer before closing. Reads
  // what the peer already sent first: closing with unread bytes makes the
  // kernel reset the connection, which can discard the verdict unread.
  void sendVerdictAndClose(Waiting& w, const Verdict& verdict, Severity severity, const std::string& why) {
    const char* verb = verdict.kind == VerdictKind::kTryAgain ? " dropped " : " refused ";
    logRefusal(where_ + verb + w.who + ": " + why, severity);
    discardPendingInput(w.socket.fd());
    try {
      const std::string told = where_ + verb + "this connection: " + verdict.reason;
      sendFrame(w.socket.fd(), encodeVerdict(Verdict{verdict.kind, told}), Deadline::afterMs(100), w.who);
    } catch (const Error&) {
      // The peer is gone or not reading; the log says why it was dropped.
    }
    shutdown(w.socket.fd(), SHUT_WR);
    w.socket.close();
  }

  void logRefusal(const std::string& line, Severity severity) {
    ++refused_;
    if (severity == Severity::kStranger || warned_ >= kRefusalsWarned) {
      LOOM_INFO("BOOTSTRAP", -1, line);
      return;
    }
    ++warned_;
    LOOM_WARN("BOOTSTRAP", -1, line);
    if (warned_ == kRefusalsWarned)
      LOOM_WARN("BOOTSTRAP", -1,
                where_ << " has refused " << kRefusalsWarned << " ranks; it logs further refusals at INFO");
  }

  static void discardPendingInput(int fd) {
    char sink[4096];
    for (int i = 0; i < 16; ++i)
      if (::recv(fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0) return;
  }

  // Ends admission without every rank: refuses those still to prove the
  // secret, and says which ranks never joined (for the ranks that did).
  AdmittedRanks giveUp(const std::string& waited) {
    std::vector<int> joined, missing;
    for (int r = 0; r < nranks_; ++r) (ranks_[r].valid() ? joined : missing).push_back(r);
    const std::string strangers =
        refused_ > 0 ? " (it refused or dropped " + std::to_string(refused_) + " other connections)" : "";
    std::string sentence;
    if (nranks_ < 0) {
      sentence = "no rank joined " + where_ + " within " + waited;
    } else {
      sentence = describeRanks(missing) + " of " + std::to_string(nranks_) + " did not join " + where_ + " within " +
                 waited + "; " + describeRanks(joined) + " joined and waited";
    }
    LOOM_WARN("BOOTSTRAP", -1, "admission ended: " << sentence << strangers);
    for (Waiting& w : waiting_)
      if (w.socket.valid())
        sendVerdictAndClose(w, Verdict{VerdictKind::kRefused, "it gave up waiting for the ranks"}, Severity::kStranger,
                            "it gave up waiting for the ranks");
    return AdmittedRanks{std::move(ranks_), std::move(timeoutsMs_), sentence};
  }

  const int listener_;
  const Secret secret_;
  const AdmissionLimits limits_;
  const std::string where_;
  std::deque<Waiting> waiting_;
  std::vector<Socket> ranks_;
  std::vector<int64_t> timeoutsMs_;
  // When the first admitted rank's own timeout runs out, whose it is, and
  // how long: admission ends then, since that rank gives up.
  Deadline patience_ = Deadline::never();
  int64_t patienceMs_ = 0;
  int patientRank_ = -1;
  int nranks_ = -1;
  int admitted_ = 0;
  int refused_ = 0;  // refused or dropped, for the give-up sentence
  int warned_ = 0;
  bool warnedOutOfDescriptors_ = false;
  Deadline resumeAccepting_ = Deadline::afterMs(0);
};

}  // namespace

AdmittedRanks admitRanks(int listener, const Secret& secret, int64_t waitForRanksMs, const AdmissionLimits& limits,
                         const std::string& where) {
  const int flags = fcntl(listener, F_GETFL);
  if (flags < 0 || fcntl(listener, F_SETFL, flags | O_NONBLOCK) != 0)
    failSystem("making the rendezvous listener non-blocking", errno);
  return Admission(listener, secret, limits, where).run(waitForRanksMs);
}

}  // namespace loom::bootstrap

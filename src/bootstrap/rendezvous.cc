#include "bootstrap/rendezvous.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>
#include <thread>

#include "base/error.h"
#include "base/logging.h"
#include "bootstrap/auth.h"
#include "bootstrap/handshake.h"
#include "bootstrap/round_reply.h"
#include "bootstrap/setup_rounds.h"

namespace loom::bootstrap {
namespace {

// The rendezvous answers a rank whose timeout ran out with the names of the
// ranks that did not arrive; the rank waits this much longer for that answer
// before it gives up on its own (when the rendezvous itself is stuck).
constexpr int64_t kAnswerGraceMs = 2000;

void serve(Socket listener, const Secret& secret, int64_t waitForRanksMs, const AdmissionLimits& limits,
           const std::string& where) {
  try {
    AdmittedRanks admitted = admitRanks(listener.fd(), secret, waitForRanksMs, limits, where);
    listener.close();  // nobody else may join this communicator
    serveSetupRounds(std::move(admitted), where);
  } catch (const std::exception& e) {
    // Nothing may escape a detached thread: that would end the process.
    LOOM_WARN("BOOTSTRAP", -1, where << " stopped: " << e.what());
  }
}

}  // namespace

Endpoint startRendezvous(const Secret& secret, const Endpoint& listenOn, int64_t waitForRanksMs,
                         const AdmissionLimits& limits) {
  uint16_t bound = 0;
  Socket listener = listenTcp(listenOn, &bound);
  const Endpoint endpoint{listenOn.address, bound};
  std::thread(serve, std::move(listener), secret, waitForRanksMs, limits, "the rendezvous at " + endpoint.toString())
      .detach();
  return endpoint;
}

RendezvousClient::RendezvousClient(const RendezvousAddress& address, int rank, int nranks, int64_t timeoutMs)
    : address_(address.endpoint.address),
      rank_(rank),
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
  hello.timeoutMs = timeoutMs_;
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
  sendFrame(socket_.fd(), mine, Deadline::afterMs(timeoutMs_), peerName_);
  std::string reply;
  try {
    reply = recvFrame(socket_.fd(), kMaxRoundPayload * (nranks_ + 1), Deadline::afterMs(timeoutMs_ + kAnswerGraceMs),
                      peerName_);
  } catch (const Error& e) {
    if (e.code() == loomTimeout)
      fail(loomTimeout, "rank " + std::to_string(rank_) + " waited " + std::to_string(timeoutMs_) +
                            " ms for the other ranks to reach the same setup step, and " + peerName_ +
                            " did not say which rank is missing within " + std::to_string(kAnswerGraceMs) +
                            " ms more (is it stuck?)");
    throw;
  }
  return decodeRound(reply, nranks_, peerName_);
}

}  // namespace loom::bootstrap

#include "bootstrap/setup_rounds.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "base/error.h"
#include "base/logging.h"
#include "base/rank_list.h"
#include "bootstrap/round_reply.h"

namespace loom::bootstrap {
namespace {

// An admitted rank may take this long to send the rest of a part it began,
// and to take in a reply.
constexpr int64_t kFrameMs = 10000;

class SetupRounds {
 public:
  SetupRounds(AdmittedRanks admitted, const std::string& where)
      : ranks_(std::move(admitted.sockets)),
        timeoutsMs_(std::move(admitted.timeoutsMs)),
        failure_(std::move(admitted.missing)),
        where_(where) {
    if (!failure_.empty()) failureReply_ = encodeRoundFailure(RoundFailure::kTimedOut, failure_);
  }

  void run() {
    while (anyConnected()) {
      if (failureReply_.empty()) {
        serveRound();
      } else {
        answerEveryPartWithTheFailure();
      }
    }
  }

 private:
  int nranks() const { return static_cast<int>(ranks_.size()); }

  bool anyConnected() const {
    for (const Socket& s : ranks_)
      if (s.valid()) return true;
    return false;
  }

  // A round: waits for every connected rank's part, or for a rank to leave,
  // or for the first waiting rank's timeout to run out.
  void serveRound() {
    ++round_;
    std::vector<std::string> parts(nranks());
    std::vector<bool> received(nranks(), false);
    std::vector<int> left;
    Deadline patience = Deadline::never();  // the earliest waiting rank's timeout
    int64_t patienceMs = 0;
    int patientRank = -1;
    for (;;) {
      std::vector<pollfd> fds;
      std::vector<int> rankOf;
      for (int r = 0; r < nranks(); ++r) {
        if (ranks_[r].valid() && !received[r]) {
          fds.push_back({ranks_[r].fd(), POLLIN, 0});
          rankOf.push_back(r);
        }
      }
      if (fds.empty()) break;  // every connected rank has sent its part
      if (!left.empty() || patience.expired()) break;
      const int waitMs = patientRank < 0 ? 1000 : static_cast<int>(patience.remainingMs(1000));
      if (poll(fds.data(), fds.size(), waitMs) < 0) {
        if (errno == EINTR) continue;
        failSystem("poll in the rendezvous", errno);
      }
      for (size_t i = 0; i < fds.size(); ++i) {
        if (fds[i].revents == 0) continue;
        const int r = rankOf[i];
        if (receivePart(r, &parts[r])) {
          received[r] = true;
          const Deadline mine = Deadline::afterMs(timeoutsMs_[r]);
          if (patientRank < 0 || mine.isBefore(patience)) {
            patience = mine;
            patienceMs = timeoutsMs_[r];
            patientRank = r;
          }
        } else {
          left.push_back(r);
        }
      }
    }
    std::vector<int> waiting, absent;
    for (int r = 0; r < nranks(); ++r) {
      if (received[r])
        waiting.push_back(r);
      else if (ranks_[r].valid())
        absent.push_back(r);
      else if (std::find(left.begin(), left.end(), r) == left.end())
        left.push_back(r);  // gone before this round (its last reply could not be sent): it has no part to give
    }
    std::sort(left.begin(), left.end());
    if (!left.empty()) {
      // Ranks leave one by one when a job ends; only a rank left behind
      // waiting (now or in a later round) needs to hear of it.
      failure_ = describeRanks(left) + " left the communicator (destroyed it or exited) during setup round " +
                 std::to_string(round_) + " at " + where_ + ", before every rank had sent its part";
      failureReply_ = encodeRoundFailure(RoundFailure::kRankLeft, failure_);
    } else if (!absent.empty()) {
      failure_ = describeRanks(absent) + " of " + std::to_string(nranks()) + " did not reach setup round " +
                 std::to_string(round_) + " at " + where_ + " within " + std::to_string(patienceMs) +
                 " ms (the timeout of rank " + std::to_string(patientRank) + "); " + describeRanks(waiting) +
                 " reached it and waited";
      failureReply_ = encodeRoundFailure(RoundFailure::kTimedOut, failure_);
    }
    if (waiting.empty()) return;
    if (!failure_.empty()) LOOM_WARN("BOOTSTRAP", -1, where_ << " ended setup: " << failure_);
    reply(waiting, failureReply_.empty() ? encodeRoundReply(parts) : failureReply_);
  }

  // After a failed round: a rank still in setup gets the failure as soon as
  // it sends its next part; the thread ends when every rank has gone.
  void answerEveryPartWithTheFailure() {
    std::vector<pollfd> fds;
    std::vector<int> rankOf;
    for (int r = 0; r < nranks(); ++r) {
      if (!ranks_[r].valid()) continue;
      fds.push_back({ranks_[r].fd(), POLLIN, 0});
      rankOf.push_back(r);
    }
    if (poll(fds.data(), fds.size(), 1000) < 0) {
      if (errno == EINTR) return;
      failSystem("poll in the rendezvous", errno);
    }
    std::vector<int> answered;
    for (size_t i = 0; i < fds.size(); ++i) {
      std::string part;
      if (fds[i].revents != 0 && receivePart(rankOf[i], &part)) answered.push_back(rankOf[i]);
    }
    reply(answered, failureReply_);
  }

  // False when the rank closed its connection (or broke the protocol),
  // which closes it here too.
  bool receivePart(int r, std::string* part) {
    try {
      if (recvFrameUnlessClosed(ranks_[r].fd(), kMaxRoundPayload, Deadline::afterMs(kFrameMs),
                                "rank " + std::to_string(r), part))
        return true;
    } catch (const Error& e) {
      LOOM_WARN("BOOTSTRAP", -1, where_ << " dropped rank " << r << ": " << e.what());
    }
    ranks_[r].close();
    return false;
  }

  // Rank 0 last: rank 0 usually runs in this process (an environment
  // launch's rank 0, a split's first member, the rank that called
  // loomGetUniqueId), and once it has its reply it may finish init and
  // exit, ending this thread mid-loop. Replies already sent are in the
  // kernel's buffers by then and still reach their ranks.
  void reply(std::vector<int> to, const std::string& bytes) {
    std::vector<bool> wanted(nranks(), false);
    for (int r : to) wanted[r] = true;
    for (int i = 1; i <= nranks(); ++i) {
      const int r = i % nranks();
      if (!wanted[r] || !ranks_[r].valid()) continue;
      try {
        sendFrame(ranks_[r].fd(), bytes, Deadline::afterMs(kFrameMs), "rank " + std::to_string(r));
      } catch (const Error&) {
        ranks_[r].close();
      }
    }
  }

  std::vector<Socket> ranks_;
  std::vector<int64_t> timeoutsMs_;
  std::string failure_;       // why the communicator cannot form; empty while it can
  std::string failureReply_;  // failure_ as a round's reply
  const std::string where_;
  int round_ = 0;
};

}  // namespace

void serveSetupRounds(AdmittedRanks admitted, const std::string& where) {
  SetupRounds(std::move(admitted), where).run();
}

}  // namespace loom::bootstrap

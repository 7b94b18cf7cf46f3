// ProcessGroupLoom::monitoredBarrier: gloo's protocol, on Loom's
// point-to-point calls.
#include <algorithm>
#include <string>

#include "process_group_loom.h"

namespace loom_torch {

namespace {

// What travels: 0 from a rank that arrived, or in rank 0's reply, 0 for
// "passed" and 1 for "failed".
constexpr int64_t kPassed = 0;
constexpr int64_t kFailed = 1;

std::vector<at::Tensor> token(int64_t value = kPassed) {
  return {at::full({1}, value, at::kLong)};
}

// An error's sentence without the C++ backtrace torch appends to its own.
const char* sentenceOf(const std::exception& error) {
  const auto* torchError = dynamic_cast<const c10::Error*>(&error);
  return torchError != nullptr ? torchError->what_without_backtrace() : error.what();
}

std::string rankList(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) text += (text.empty() ? "" : ", ") + std::to_string(rank);
  return text;
}

// A wait of `left`, never 0 ms, which c10d's wait reads as "no limit".
std::chrono::milliseconds atLeastAMillisecond(std::chrono::milliseconds left) {
  return std::max(left, std::chrono::milliseconds(1));
}

}  // namespace

// As gloo's: every other rank sends rank 0 a token and waits for its reply;
// rank 0 takes the tokens in rank order within the timeout and names the
// first rank whose token did not come (with waitAllRanks, every such rank),
// then replies to all. Unlike barrier(), it says which rank is missing even
// where that rank is alive and busy elsewhere. The timeout is rank 0's
// alone: the others wait as long as the group's timeout, so that rank 0
// reports first and no rank passes while another fails.
//
// When rank 0 fails the barrier it still replies, with "failed": the ranks
// that arrived raise at once, as gloo's do, instead of waiting out the
// group's timeout. Each call on a group takes a tag of its own from the
// reserved range, so a failed call's tokens and replies, still in flight,
// meet no later call.
void ProcessGroupLoom::monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) {
  if (size_ == 1) return;
  const std::chrono::milliseconds timeout = opts.timeout == c10d::kUnsetTimeout ? timeout_ : opts.timeout;
  const int tag = kMonitoredBarrierTags + static_cast<int>(monitoredBarriers_++ % kMonitoredBarrierTags);
  if (rank_ == 0)
    monitorTheOthers(timeout, waitAllRanks, tag);
  else
    reportToRankZero(tag);
}

void ProcessGroupLoom::reportToRankZero(int tag) {
  std::vector<at::Tensor> sent = token();
  std::vector<at::Tensor> received = token();
  try {
    c10::intrusive_ptr<c10d::Work> tokenOut = transmit(sent, 0, tag);
    c10::intrusive_ptr<c10d::Work> reply = receive(received, 0, tag);
    tokenOut->wait(timeout_);
    reply->wait(timeout_);
    TORCH_CHECK(received[0].item<int64_t>() == kPassed, "rank 0 replied that the barrier failed");
  } catch (const std::exception& e) {
    TORCH_CHECK(false, "Rank ", rank_,
                " successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank "
                "0: ",
                sentenceOf(e));
  }
}

void ProcessGroupLoom::monitorTheOthers(std::chrono::milliseconds timeout, bool waitAllRanks, int tag) {
  try {
    awaitTheOthers(timeout, waitAllRanks, tag);
  } catch (...) {
    // The replies are left running: a rank that comes late still hears.
    for (int peer = 1; peer < size_; ++peer) {
      std::vector<at::Tensor> failed = token(kFailed);
      transmit(failed, peer, tag);
    }
    throw;
  }
  std::vector<std::vector<at::Tensor>> replies;
  std::vector<c10::intrusive_ptr<c10d::Work>> repliesOut;
  for (int peer = 1; peer < size_; ++peer) {
    replies.push_back(token());
    repliesOut.push_back(transmit(replies.back(), peer, tag));
  }
  for (int peer = 1; peer < size_; ++peer) {
    try {
      repliesOut[peer - 1]->wait(atLeastAMillisecond(timeout));
    } catch (const std::exception& e) {
      TORCH_CHECK(false, "[Rank 0]: Rank ", peer, " failed to pass monitoredBarrier in ", timeout.count(),
                  " ms: ", sentenceOf(e));
    }
  }
}

void ProcessGroupLoom::awaitTheOthers(std::chrono::milliseconds timeout, bool waitAllRanks, int tag) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<at::Tensor>> tokens;
  std::vector<c10::intrusive_ptr<c10d::Work>> tokensIn;
  for (int peer = 1; peer < size_; ++peer) {
    tokens.push_back(token());
    tokensIn.push_back(receive(tokens.back(), peer, tag));
  }
  std::vector<int> missing;
  for (int peer = 1; peer < size_; ++peer) {
    // Each rank gets what is left of the timeout; with waitAllRanks, the
    // whole timeout, or the first missing rank would leave none for the rest.
    std::chrono::milliseconds left = timeout;
    if (!waitAllRanks) {
      left -= std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
      if (left <= std::chrono::milliseconds(0)) {
        std::vector<int> notYet;
        for (int rank = peer; rank < size_; ++rank)
          if (!tokensIn[rank - 1]->isCompleted() || !tokensIn[rank - 1]->isSuccess()) notYet.push_back(rank);
        if (!notYet.empty())
          TORCH_CHECK(false, "[Rank 0]: Rank 0 timed out in monitoredBarrier after ", timeout.count(),
                      " ms; not yet heard from: ", rankList(notYet));
      }
    }
    try {
      tokensIn[peer - 1]->wait(atLeastAMillisecond(left));
    } catch (const std::exception& e) {
      TORCH_CHECK(waitAllRanks, "[Rank 0]: Rank ", peer, " failed to pass monitoredBarrier in ", timeout.count(),
                  " ms: ", sentenceOf(e));
      missing.push_back(peer);
    }
  }
  TORCH_CHECK(missing.empty(), "[Rank 0]: Ranks ", rankList(missing), " failed to pass monitoredBarrier in ",
              timeout.count(), " ms");
}

}  // namespace loom_torch

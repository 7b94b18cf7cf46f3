// ProcessGroupLoom::monitoredBarrier: gloo's protocol, on Loom's
// point-to-point calls.
#include <algorithm>
#include <string>

#include "process_group_loom.h"

namespace loom_torch {

// As gloo's: every other rank sends rank 0 a token and waits for its reply;
// rank 0 takes the tokens in rank order within the timeout and names the
// first rank whose token did not come (with waitAllRanks, every such rank),
// then replies to all. Unlike barrier(), it says which rank is missing even
// where that rank is alive and busy elsewhere.
void ProcessGroupLoom::monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) {
  if (size_ == 1) return;
  const std::chrono::milliseconds timeout = opts.timeout == c10d::kUnsetTimeout ? timeout_ : opts.timeout;
  if (rank_ == 0)
    monitorTheOthers(timeout, waitAllRanks);
  else
    reportToRankZero(timeout);
}

namespace {

std::vector<at::Tensor> token() {
  return {at::zeros({1}, at::kLong)};
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

}  // namespace

void ProcessGroupLoom::reportToRankZero(std::chrono::milliseconds timeout) {
  std::vector<at::Tensor> sent = token();
  std::vector<at::Tensor> received = token();
  try {
    const auto start = std::chrono::steady_clock::now();
    transmit(sent, 0, kMonitoredBarrierTag)->wait(timeout);
    const auto left =
        timeout - std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    receive(received, 0, kMonitoredBarrierTag)->wait(std::max(left, std::chrono::milliseconds(0)));
  } catch (const std::exception& e) {
    TORCH_CHECK(false, "Rank ", rank_,
                " successfully reached monitoredBarrier, but received errors while waiting for send/recv from rank "
                "0: ",
                sentenceOf(e));
  }
}

void ProcessGroupLoom::monitorTheOthers(std::chrono::milliseconds timeout, bool waitAllRanks) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<at::Tensor>> tokens;
  std::vector<c10::intrusive_ptr<c10d::Work>> tokensIn;
  for (int peer = 1; peer < size_; ++peer) {
    tokens.push_back(token());
    tokensIn.push_back(receive(tokens.back(), peer, kMonitoredBarrierTag));
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
        for (int rank = peer; rank < size_; ++rank) notYet.push_back(rank);
        TORCH_CHECK(false, "[Rank 0]: Rank 0 timed out in monitoredBarrier after ", timeout.count(),
                    " ms; not yet heard from: ", rankList(notYet));
      }
    }
    try {
      tokensIn[peer - 1]->wait(left);
    } catch (const std::exception& e) {
      TORCH_CHECK(waitAllRanks, "[Rank 0]: Rank ", peer, " failed to pass monitoredBarrier in ", timeout.count(),
                  " ms: ", sentenceOf(e));
      missing.push_back(peer);
    }
  }
  TORCH_CHECK(missing.empty(), "[Rank 0]: Ranks ", rankList(missing), " failed to pass monitoredBarrier in ",
              timeout.count(), " ms");
  std::vector<std::vector<at::Tensor>> replies;
  std::vector<c10::intrusive_ptr<c10d::Work>> repliesOut;
  for (int peer = 1; peer < size_; ++peer) {
    replies.push_back(token());
    repliesOut.push_back(transmit(replies.back(), peer, kMonitoredBarrierTag));
  }
  for (int peer = 1; peer < size_; ++peer) {
    try {
      repliesOut[peer - 1]->wait(timeout);
    } catch (const std::exception& e) {
      TORCH_CHECK(false, "[Rank 0]: Rank ", peer, " failed to pass monitoredBarrier in ", timeout.count(),
                  " ms: ", sentenceOf(e));
    }
  }
}

}  // namespace loom_torch

#include "bootstrap/round_reply.h"

#include <cstdint>
#include <cstring>

#include "base/error.h"

namespace loom::bootstrap {
namespace {

constexpr char kContributions = 'O';

}  // namespace

std::string encodeRoundReply(const std::vector<std::string>& contributions) {
  std::string reply(1, kContributions);
  for (const std::string& c : contributions) {
    const uint64_t length = c.size();
    reply.append(reinterpret_cast<const char*>(&length), sizeof(length));
    reply.append(c);
  }
  return reply;
}

std::string encodeRoundFailure(RoundFailure kind, const std::string& sentence) {
  return std::string(1, static_cast<char>(kind)) + sentence;
}

std::vector<std::string> decodeRound(const std::string& reply, int nranks, const std::string& peerName) {
  if (reply.empty()) fail(loomRemoteError, peerName + " sent an empty reply");
  if (reply[0] == static_cast<char>(RoundFailure::kRankLeft)) fail(loomRemoteError, "bootstrap: " + reply.substr(1));
  if (reply[0] == static_cast<char>(RoundFailure::kTimedOut)) fail(loomTimeout, "bootstrap: " + reply.substr(1));
  if (reply[0] != kContributions)
    fail(loomRemoteError, peerName + " sent a reply that is neither a round nor a refusal");
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

// The reply to one setup round, as the rendezvous sends it to each rank:
// every rank's contribution, or the sentence of why the round failed. Kept
// apart from the sockets so the fuzzer (tests/fuzz) can feed it bytes.
//
//   'O', then per rank a 64-bit length and that many bytes
//   'E', then a sentence: a rank left (destroyed its communicator or died)
//   'T', then a sentence: some ranks did not arrive within the timeout
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace loom::bootstrap {

enum class RoundFailure : char { kRankLeft = 'E', kTimedOut = 'T' };

// The most one rank may contribute to one round (the rendezvous refuses a
// larger part; a reply holds one per rank).
constexpr size_t kMaxRoundPayload = 1 << 20;

std::string encodeRoundReply(const std::vector<std::string>& contributions);
std::string encodeRoundFailure(RoundFailure kind, const std::string& sentence);

// The nranks contributions of a reply. A failure throws its sentence
// (loomRemoteError for a rank that left, loomTimeout for ranks that did not
// arrive); malformed bytes throw loomRemoteError naming peerName.
std::vector<std::string> decodeRound(const std::string& reply, int nranks, const std::string& peerName);

}  // namespace loom::bootstrap

// The bytes of admission to a rendezvous, and nothing else: what the
// rendezvous sends first (a greeting with a fresh nonce), what a rank answers
// (a hello proving the secret and naming its rank), and the verdict the
// rendezvous sends back. Every message before the verdict has a fixed size,
// so a stranger can make the rendezvous read at most kHelloSize bytes, never
// allocate what a length field asks for.
//
// Each message starts with 8 magic bytes and the protocol version, and later
// versions must keep that start, so a rank of another version (or a program
// that is not Loom at all) is told what is wrong instead of timing out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "bootstrap/auth.h"

namespace loom::bootstrap {

// 1 was the unversioned exchange (nonce, then proof and rank, no verdict);
// 2 had no timeout in the hello, so the rendezvous could not tell the ranks
// which of them was missing before their own clocks ran out.
constexpr uint32_t kProtocolVersion = 4;

constexpr size_t kHeaderSize = 12;  // magic + version, at the start of greeting and hello
constexpr size_t kGreetingSize = kHeaderSize + sizeof(Nonce);
constexpr size_t kHelloSize = kHeaderSize + sizeof(Proof) + 2 * sizeof(int32_t) + sizeof(int64_t);
// A verdict is a frame (sendFrame): a refusal sentence longer than this is
// not from a Loom rendezvous.
constexpr size_t kMaxVerdictSize = 4096;

struct Greeting {
  uint32_t version = kProtocolVersion;
  Nonce nonce{};
};

struct Hello {
  uint32_t version = kProtocolVersion;
  Proof proof{};
  int32_t rank = -1;
  int32_t nranks = -1;
  // The rank's communicator timeout: how long it waits for the others at
  // each setup step. The rendezvous answers before it runs out, naming the
  // ranks that did not arrive.
  int64_t timeoutMs = 0;
};

std::string encodeGreeting(const Greeting& greeting);
std::string encodeHello(const Hello& hello);

// Each decoder returns what the bytes say, or throws loomRemoteError whose
// sentence says what is wrong with them without naming the sender ("its
// first bytes ... are not ..."), so the rendezvous can log it about the peer
// and send it to the peer alike. decodeGreeting and decodeHello need the
// whole message; checkHelloHeader judges the first kHeaderSize bytes alone,
// so the rendezvous refuses a stranger on its first bytes instead of waiting
// for the rest.
Greeting decodeGreeting(const std::string& bytes);
void checkGreetingHeader(const std::string& bytes);
void checkHelloHeader(const std::string& bytes);
Hello decodeHello(const std::string& bytes);

// Whether bytes begin with a greeting's (a hello's) magic, whatever the
// version after it: tells a Loom of another version from a stranger.
bool startsAsGreeting(const std::string& bytes);
bool startsAsHello(const std::string& bytes);

// The verdict's payload: admitted, refused for good (wrong secret, rank
// conflicts, garbage), or dropped before it could prove anything (too slow,
// or too many strangers waiting), which a rank answers by connecting again.
enum class VerdictKind : char { kAdmitted = 'O', kRefused = 'E', kTryAgain = 'R' };

struct Verdict {
  VerdictKind kind;
  std::string reason;  // empty when admitted
};

std::string encodeVerdict(const Verdict& verdict);
Verdict decodeVerdict(const std::string& payload);

// Printable text of bytes that were not what we expected, for the sentence
// (at most the first 16, non-printable ones as \xNN).
std::string quoteBytes(const std::string& bytes);

}  // namespace loom::bootstrap

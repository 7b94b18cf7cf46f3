#include "bootstrap/handshake.h"

#include <cstring>

#include "base/error.h"

namespace loom::bootstrap {
namespace {

// Different magics for the two directions, so a rank that connects to
// another rank (or to itself) is not mistaken for a rendezvous.
constexpr char kGreetingMagic[8] = {'L', 'O', 'O', 'M', '-', 'R', 'D', 'V'};
constexpr char kHelloMagic[8] = {'L', 'O', 'O', 'M', '-', 'R', 'N', 'K'};

void put(std::string& out, const void* data, size_t size) {
  out.append(static_cast<const char*>(data), size);
}

template <typename T>
T take(const std::string& bytes, size_t& at) {
  T value;
  std::memcpy(&value, bytes.data() + at, sizeof(value));
  at += sizeof(value);
  return value;
}

std::string header(const char (&magic)[8]) {
  std::string out(magic, sizeof(magic));
  put(out, &kProtocolVersion, sizeof(kProtocolVersion));
  return out;
}

// Checks magic and version; `expected` says what the bytes should have been.
void checkHeader(const std::string& bytes, const char (&magic)[8], const char* expected) {
  if (bytes.size() < kHeaderSize) fail(loomRemoteError, "its first bytes were cut short: not " + std::string(expected));
  if (std::memcmp(bytes.data(), magic, sizeof(magic)) != 0)
    fail(loomRemoteError, "its first bytes " + quoteBytes(bytes) + " are not " + expected);
  size_t at = sizeof(magic);
  const uint32_t version = take<uint32_t>(bytes, at);
  if (version != kProtocolVersion)
    fail(loomRemoteError, "it speaks Loom bootstrap protocol " + std::to_string(version) + " and this side speaks " +
                              std::to_string(kProtocolVersion) + ": every rank must run the same Loom version");
}

}  // namespace

std::string encodeGreeting(const Greeting& greeting) {
  std::string out = header(kGreetingMagic);
  put(out, greeting.nonce.data(), greeting.nonce.size());
  return out;
}

std::string encodeHello(const Hello& hello) {
  std::string out(kHelloMagic, sizeof(kHelloMagic));
  put(out, &hello.version, sizeof(hello.version));
  put(out, hello.proof.data(), hello.proof.size());
  put(out, &hello.rank, sizeof(hello.rank));
  put(out, &hello.nranks, sizeof(hello.nranks));
  put(out, &hello.timeoutMs, sizeof(hello.timeoutMs));
  return out;
}

void checkGreetingHeader(const std::string& bytes) {
  checkHeader(bytes, kGreetingMagic, "a Loom rendezvous greeting");
}

Greeting decodeGreeting(const std::string& bytes) {
  checkGreetingHeader(bytes);
  if (bytes.size() != kGreetingSize)
    fail(loomRemoteError,
         "its greeting has " + std::to_string(bytes.size()) + " bytes instead of " + std::to_string(kGreetingSize));
  Greeting greeting;
  std::memcpy(greeting.nonce.data(), bytes.data() + kHeaderSize, greeting.nonce.size());
  return greeting;
}

void checkHelloHeader(const std::string& bytes) {
  checkHeader(bytes, kHelloMagic, "a Loom rank's hello");
}

Hello decodeHello(const std::string& bytes) {
  checkHelloHeader(bytes);
  if (bytes.size() != kHelloSize)
    fail(loomRemoteError,
         "its hello has " + std::to_string(bytes.size()) + " bytes instead of " + std::to_string(kHelloSize));
  Hello hello;
  size_t at = sizeof(kHelloMagic);
  hello.version = take<uint32_t>(bytes, at);
  std::memcpy(hello.proof.data(), bytes.data() + at, hello.proof.size());
  at += hello.proof.size();
  hello.rank = take<int32_t>(bytes, at);
  hello.nranks = take<int32_t>(bytes, at);
  hello.timeoutMs = take<int64_t>(bytes, at);
  return hello;
}

bool startsAsGreeting(const std::string& bytes) {
  return bytes.size() >= sizeof(kGreetingMagic) &&
         std::memcmp(bytes.data(), kGreetingMagic, sizeof(kGreetingMagic)) == 0;
}

bool startsAsHello(const std::string& bytes) {
  return bytes.size() >= sizeof(kHelloMagic) && std::memcmp(bytes.data(), kHelloMagic, sizeof(kHelloMagic)) == 0;
}

std::string encodeVerdict(const Verdict& verdict) {
  return std::string(1, static_cast<char>(verdict.kind)) + verdict.reason;
}

Verdict decodeVerdict(const std::string& payload) {
  if (payload.empty()) fail(loomRemoteError, "its verdict on this rank is empty");
  const VerdictKind kind = static_cast<VerdictKind>(payload[0]);
  if (kind != VerdictKind::kAdmitted && kind != VerdictKind::kRefused && kind != VerdictKind::kTryAgain)
    fail(loomRemoteError, "its verdict " + quoteBytes(payload) + " is neither admitted, refused nor try again");
  if (kind == VerdictKind::kAdmitted && payload.size() != 1)
    fail(loomRemoteError,
         "its verdict admits this rank but carries " + std::to_string(payload.size() - 1) + " more bytes");
  return Verdict{kind, payload.substr(1)};
}

std::string quoteBytes(const std::string& bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  const size_t shown = bytes.size() < 16 ? bytes.size() : 16;
  for (size_t i = 0; i < shown; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  out += shown < bytes.size() ? "\"..." : "\"";
  return out;
}

}  // namespace loom::bootstrap

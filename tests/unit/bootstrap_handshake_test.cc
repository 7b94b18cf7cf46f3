// The admission messages byte for byte: what encodes decodes back, and bytes
// that are not a message of this version fail with a sentence saying what
// they are instead.
#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "bootstrap/handshake.h"

namespace loom::bootstrap {
namespace {

std::string sentenceOf(void (*decode)(const std::string&), const std::string& bytes) {
  try {
    decode(bytes);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomRemoteError);
    return e.what();
  }
  return "";
}

TEST(HandshakeTest, GreetingAndHelloRoundTrip) {
  Greeting greeting;
  greeting.nonce.fill(7);
  const std::string greetingBytes = encodeGreeting(greeting);
  EXPECT_EQ(greetingBytes.size(), kGreetingSize);
  EXPECT_EQ(decodeGreeting(greetingBytes).nonce, greeting.nonce);

  Hello hello;
  hello.proof.fill(9);
  hello.rank = 3;
  hello.nranks = 64;
  hello.timeoutMs = 3'000'000'000'000;  // a century: timeouts saturate there, and must fit
  const std::string helloBytes = encodeHello(hello);
  EXPECT_EQ(helloBytes.size(), kHelloSize);
  const Hello back = decodeHello(helloBytes);
  EXPECT_EQ(back.proof, hello.proof);
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.nranks, 64);
  EXPECT_EQ(back.timeoutMs, hello.timeoutMs);
  EXPECT_TRUE(startsAsHello(helloBytes));
  EXPECT_FALSE(startsAsGreeting(helloBytes));
}

TEST(HandshakeTest, GarbageIsNamedByItsFirstBytes) {
  const std::string garbage = std::string(8, '\xff') + "not a loom rank";
  EXPECT_EQ(sentenceOf(checkHelloHeader, garbage),
            "its first bytes \"\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xffnot a lo\"... are not a Loom rank's hello");
  EXPECT_EQ(sentenceOf(checkHelloHeader, "GET /"), "its first bytes were cut short: not a Loom rank's hello");
  // A greeting sent back to a rendezvous is not a hello either.
  EXPECT_NE(sentenceOf(checkHelloHeader, encodeGreeting({})).find("are not a Loom rank's hello"), std::string::npos);
}

TEST(HandshakeTest, AnotherVersionIsNamedWithBoth) {
  Hello hello;
  hello.version = 7;
  EXPECT_EQ(sentenceOf(checkHelloHeader, encodeHello(hello)),
            "it speaks Loom bootstrap protocol 7 and this side speaks " + std::to_string(kProtocolVersion) +
                ": every rank must run the same Loom version");
}

TEST(HandshakeTest, VerdictsDecodeOrSayWhatTheyAre) {
  EXPECT_EQ(decodeVerdict(encodeVerdict({VerdictKind::kAdmitted, ""})).kind, VerdictKind::kAdmitted);
  const Verdict refused = decodeVerdict(encodeVerdict({VerdictKind::kRefused, "wrong secret"}));
  EXPECT_EQ(refused.kind, VerdictKind::kRefused);
  EXPECT_EQ(refused.reason, "wrong secret");
  EXPECT_EQ(decodeVerdict("Rtoo slow").kind, VerdictKind::kTryAgain);
  EXPECT_THROW(decodeVerdict(""), Error);
  EXPECT_THROW(decodeVerdict("Oextra"), Error);
  try {
    decodeVerdict("X\x01");
    ADD_FAILURE() << "an unknown verdict decoded";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "its verdict \"X\\x01\" is neither admitted, refused nor try again");
  }
}

}  // namespace
}  // namespace loom::bootstrap

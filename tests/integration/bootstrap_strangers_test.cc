// The rendezvous against strangers: connections that
// never speak, or speak garbage, must not keep the real ranks from meeting
// within their timeout, a rank with the wrong secret is told why, and the
// rendezvous keeps nothing open afterwards.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/unique_id.h"
#include "support/tcp_peer.h"

namespace loom::test {
namespace {

constexpr int kRanks = 4;
// The report: "with a 5 s timeout init fails on every rank". Before the
// fix, each stranger held the serial admission for 10 s.
constexpr int64_t kRankTimeoutMs = 5000;

enum class Stranger { kIdle, kGarbage };

// A length prefix of 2^64 - 1, then text: what a port scanner or a
// confused client might send, and shorter than any hello, so a rendezvous
// that waits for a whole hello before judging waits for ever.
const std::string kGarbage = std::string(8, '\xff') + "not a loom rank";

struct FloodCase {
  Stranger kind;
  int count;
};

std::string caseName(const FloodCase& c) {
  if (c.count == 0) return "NoStrangers";
  return std::string(c.kind == Stranger::kIdle ? "Idle" : "Garbage") + std::to_string(c.count);
}

class StrangersTest : public ::testing::TestWithParam<FloodCase> {};

// What one rank's init returned.
struct InitOutcome {
  loomResult_t result = loomInternalError;
  std::string sentence;
  loomComm_t comm = nullptr;
};

InitOutcome initRank(const loomUniqueId& id, int rank) {
  loomConfig_t config = LOOM_CONFIG_INITIALIZER;
  config.timeoutMs = kRankTimeoutMs;
  InitOutcome outcome;
  outcome.result = loomCommInitRank(&outcome.comm, kRanks, id, rank, &config);
  if (outcome.result != loomSuccess) outcome.sentence = loomGetLastError();
  return outcome;
}

TEST_P(StrangersTest, RealRanksMeetAndAWrongSecretIsToldWhy) {
  const FloodCase flood = GetParam();
  loomUniqueId id;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess) << loomGetLastError();
  const bootstrap::Endpoint rendezvous = bootstrap::decodeUniqueId(id).endpoint;

  // The strangers connect first, so they are ahead of every rank.
  std::vector<int> strangers;
  for (int i = 0; i < flood.count; ++i) {
    const int fd = connectTo(rendezvous.address.ipv4NetworkOrder(), rendezvous.port);
    ASSERT_GE(fd, 0) << "stranger " << i << " could not connect: " << std::strerror(-fd);
    strangers.push_back(fd);
    if (flood.kind == Stranger::kGarbage) {
      ASSERT_EQ(send(fd, kGarbage.data(), kGarbage.size(), MSG_NOSIGNAL), static_cast<ssize_t>(kGarbage.size()));
    }
  }

  // A rank with the wrong secret, behind the strangers and before the real
  // ranks (after them, it would be told that every rank has joined).
  const auto start = std::chrono::steady_clock::now();
  loomUniqueId forged = id;
  forged.internal[40] ^= 0x55;  // inside the secret (bytes 32 to 47 of format 2)
  InitOutcome intruder;
  std::thread([&] { intruder = initRank(forged, 0); }).join();

  std::vector<InitOutcome> ranks(kRanks);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) threads.emplace_back([&, r] { ranks[r] = initRank(id, r); });
  for (auto& t : threads) t.join();
  const auto met = std::chrono::steady_clock::now();

  for (int r = 0; r < kRanks; ++r) EXPECT_EQ(ranks[r].result, loomSuccess) << "rank " << r << ": " << ranks[r].sentence;
  // Measured, not asserted: scripts and docs/RELIABILITY.md read this line.
  std::printf("[ measure  ] %s: the intruder's and every rank's init returned after %lld ms\n", caseName(flood).c_str(),
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(met - start).count()));

  EXPECT_NE(intruder.result, loomSuccess);
  EXPECT_EQ(intruder.comm, nullptr);
  EXPECT_NE(intruder.sentence.find("wrong secret"), std::string::npos) << intruder.sentence;
  EXPECT_EQ(intruder.sentence.find("Broken pipe"), std::string::npos) << intruder.sentence;

  std::vector<std::thread> users;
  for (int r = 0; r < kRanks; ++r) {
    if (ranks[r].comm == nullptr) continue;
    users.emplace_back([&, r] {
      int64_t mine = r, sum = 0;
      EXPECT_EQ(loomAllReduce(&mine, &sum, 1, loomInt64, loomSum, ranks[r].comm, nullptr, nullptr), loomSuccess)
          << loomCommGetLastError(ranks[r].comm);
      EXPECT_EQ(sum, kRanks * (kRanks - 1) / 2);
      EXPECT_EQ(loomCommDestroy(ranks[r].comm), loomSuccess);
    });
  }
  for (auto& t : users) t.join();

  // Every stranger is told to go and its connection closed: the
  // rendezvous keeps nothing of theirs once the ranks are in.
  for (size_t i = 0; i < strangers.size(); ++i) {
    std::string told;
    EXPECT_TRUE(readUntilClosed(strangers[i], 30000, &told)) << "stranger " << i << "'s connection is still open";
    if (flood.kind == Stranger::kGarbage) {
      EXPECT_NE(told.find("are not a Loom rank's hello"), std::string::npos)
          << "stranger " << i << " was told: " << told;
    }
    close(strangers[i]);
  }
  EXPECT_EQ(waitUntilNothingHeldOnPort(rendezvous.port, 30000), 0)
      << "the rendezvous left sockets open on port " << rendezvous.port;
}

INSTANTIATE_TEST_SUITE_P(Floods, StrangersTest,
                         ::testing::Values(FloodCase{Stranger::kIdle, 0},  // what init costs without them
                                           FloodCase{Stranger::kIdle, 1}, FloodCase{Stranger::kIdle, 4},
                                           FloodCase{Stranger::kIdle, 64}, FloodCase{Stranger::kGarbage, 1},
                                           FloodCase{Stranger::kGarbage, 4}, FloodCase{Stranger::kGarbage, 64},
                                           // More than the rendezvous keeps waiting at once (128).
                                           FloodCase{Stranger::kIdle, 200}),
                         [](const auto& info) { return caseName(info.param); });

}  // namespace
}  // namespace loom::test

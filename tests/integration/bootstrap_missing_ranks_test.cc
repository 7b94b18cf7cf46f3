// The rendezvous names the ranks that are missing: when a rank's own timeout
// runs out during setup, every rank that waits is told which ranks never
// joined, or never reached the step, or left, instead of each timing out on
// "some rank did not arrive".
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <netinet/in.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "bootstrap/rendezvous.h"
#include "bootstrap/unique_id.h"

namespace loom::test {
namespace {

using bootstrap::RendezvousAddress;
using bootstrap::RendezvousClient;

RendezvousAddress startOnLoopback() {
  RendezvousAddress address;
  address.secret = bootstrap::randomSecret();
  address.endpoint = bootstrap::startRendezvous(
      address.secret, bootstrap::Endpoint{bootstrap::IpAddress::ipv4(htonl(INADDR_LOOPBACK)), 0}, 60000);
  return address;
}

struct Outcome {
  loomResult_t code = loomSuccess;
  std::string sentence;
};

Outcome roundOf(RendezvousClient& client) {
  try {
    client.allGather("part");
  } catch (const Error& e) {
    return Outcome{e.code(), e.what()};
  }
  return Outcome{};
}

TEST(MissingRanksTest, RanksThatNeverJoinAreNamedToThoseWaiting) {
  loomUniqueId id;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess) << loomGetLastError();
  loomConfig_t config = LOOM_CONFIG_INITIALIZER;
  config.timeoutMs = 1000;
  std::vector<Outcome> outcomes(4);
  std::vector<std::thread> ranks;
  for (int r : {0, 2}) {  // ranks 1 and 3 never start
    ranks.emplace_back([&, r] {
      loomComm_t comm = nullptr;
      outcomes[r].code = loomCommInitRank(&comm, 4, id, r, &config);
      outcomes[r].sentence = loomGetLastError();
      EXPECT_EQ(comm, nullptr);
    });
  }
  for (auto& t : ranks) t.join();
  for (int r : {0, 2}) {
    EXPECT_EQ(outcomes[r].code, loomTimeout) << outcomes[r].sentence;
    EXPECT_NE(outcomes[r].sentence.find("ranks 1 and 3 of 4 did not join the rendezvous at "), std::string::npos)
        << outcomes[r].sentence;
    EXPECT_NE(outcomes[r].sentence.find("within 1000 ms (the timeout of rank "), std::string::npos)
        << outcomes[r].sentence;
    EXPECT_NE(outcomes[r].sentence.find("ranks 0 and 2 joined and waited"), std::string::npos) << outcomes[r].sentence;
  }
}

// The first waiting rank's timeout ends the round for all: rank 1, whose
// own timeout is far longer, hears of rank 2 when rank 0 would give up.
TEST(MissingRanksTest, RankThatDoesNotReachASetupRoundIsNamedAtTheShortestTimeout) {
  const RendezvousAddress address = startOnLoopback();
  std::vector<std::unique_ptr<RendezvousClient>> clients(3);
  std::vector<std::thread> joining;
  const int64_t timeouts[3] = {800, 60000, 60000};
  for (int r = 0; r < 3; ++r)
    joining.emplace_back([&, r] { clients[r] = std::make_unique<RendezvousClient>(address, r, 3, timeouts[r]); });
  for (auto& t : joining) t.join();
  std::vector<Outcome> first(3);
  std::vector<std::thread> round;
  for (int r = 0; r < 3; ++r) round.emplace_back([&, r] { first[r] = roundOf(*clients[r]); });
  for (auto& t : round) t.join();
  for (int r = 0; r < 3; ++r) ASSERT_EQ(first[r].code, loomSuccess) << first[r].sentence;

  std::vector<Outcome> second(3);
  const auto start = std::chrono::steady_clock::now();
  round.clear();
  for (int r = 0; r < 2; ++r) round.emplace_back([&, r] { second[r] = roundOf(*clients[r]); });
  for (auto& t : round) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(second[r].code, loomTimeout) << second[r].sentence;
    EXPECT_NE(second[r].sentence.find("rank 2 of 3 did not reach setup round 2 at the rendezvous at "),
              std::string::npos)
        << second[r].sentence;
    EXPECT_NE(second[r].sentence.find("within 800 ms (the timeout of rank 0); ranks 0 and 1 reached it and waited"),
              std::string::npos)
        << second[r].sentence;
  }
  // Not rank 1's own 60 s: the rendezvous answered at rank 0's 0.8 s.
  EXPECT_LT(seconds, 30.0);
  // The late rank hears the same, at once.
  second[2] = roundOf(*clients[2]);
  EXPECT_EQ(second[2].code, loomTimeout);
  EXPECT_EQ(second[2].sentence, second[0].sentence);
}

TEST(MissingRanksTest, RankThatLeavesDuringSetupIsNamedAtOnce) {
  const RendezvousAddress address = startOnLoopback();
  std::vector<std::unique_ptr<RendezvousClient>> clients(3);
  std::vector<std::thread> joining;
  for (int r = 0; r < 3; ++r)
    joining.emplace_back([&, r] { clients[r] = std::make_unique<RendezvousClient>(address, r, 3, 60000); });
  for (auto& t : joining) t.join();
  std::vector<Outcome> outcomes(3);
  std::vector<std::thread> round;
  for (int r = 0; r < 2; ++r) round.emplace_back([&, r] { outcomes[r] = roundOf(*clients[r]); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  clients[2].reset();  // closes its connection, as a rank that exits does
  for (auto& t : round) t.join();
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(outcomes[r].code, loomRemoteError) << outcomes[r].sentence;
    EXPECT_NE(outcomes[r].sentence.find("bootstrap: rank 2 left the communicator (destroyed it or exited) during "
                                        "setup round 1 at the rendezvous at "),
              std::string::npos)
        << outcomes[r].sentence;
  }
}

}  // namespace
}  // namespace loom::test

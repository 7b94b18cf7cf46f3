// The C++ wrapper: RAII ownership, dtype deduction from spans, exceptions
// with the library's sentence.
#include <gtest/gtest.h>

#include <loom/loom.hpp>
#include <numeric>
#include <thread>
#include <vector>

namespace {

TEST(LoomHppTest, SpansDeduceTheDtypeAndResultsAreExact) {
  loomUniqueId id = loom::Comm::uniqueId();
  auto body = [&](int rank) {
    loom::Comm comm(3, id, rank);
    EXPECT_EQ(comm.size(), 3);
    EXPECT_EQ(comm.rank(), rank);
    std::vector<double> in(1001, rank + 0.5), out(1001);
    comm.allReduce(std::span(in), std::span(out), loomSum);
    for (double v : out) ASSERT_EQ(v, 4.5);
    std::vector<int64_t> gathered(3 * 5);
    std::vector<int64_t> mine(5, rank * 10);
    comm.allGather(std::span(mine), std::span(gathered));
    for (int q = 0; q < 3; ++q)
      for (int j = 0; j < 5; ++j) ASSERT_EQ(gathered[q * 5 + j], q * 10);
    std::vector<uint8_t> bytes(7, static_cast<uint8_t>(rank));
    loom::Request request = comm.allReduceAsync(std::span(bytes), loomMax);
    request.wait();
    for (uint8_t b : bytes) ASSERT_EQ(b, 2);
    comm.barrier();
  };
  std::vector<std::thread> ranks;
  for (int r = 0; r < 3; ++r) ranks.emplace_back(body, r);
  for (auto& t : ranks) t.join();
}

TEST(LoomHppTest, FailuresThrowWithTheSentence) {
  loom::Comm comm(1, loom::Comm::uniqueId(), 0);
  std::vector<float> data(4);
  try {
    comm.broadcast(std::span(data), 3);
    FAIL() << "root 3 of 1 rank was accepted";
  } catch (const loom::Exception& e) {
    EXPECT_EQ(e.code(), loomInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("root 3 is not a rank"), std::string::npos) << e.what();
  }
  std::vector<float> small(2);
  EXPECT_THROW(comm.allReduce(std::span(data), std::span(small), loomSum), loom::Exception);
}

TEST(LoomHppTest, MovedFromOwnersReleaseNothing) {
  loom::Comm a(1, loom::Comm::uniqueId(), 0);
  loom::Comm b = std::move(a);
  EXPECT_FALSE(a.valid());
  EXPECT_TRUE(b.valid());
  std::vector<int32_t> v(3, 7);
  loom::Request r = b.allReduceAsync(std::span(v), loomSum);
  loom::Request moved = std::move(r);
  EXPECT_EQ(r.get(), nullptr);
  EXPECT_TRUE(moved.waitFor(-1));
  EXPECT_EQ(v[0], 7);
}

// loom::group: a blocking send and recv ring, every rank receiving first,
// completes because the group launches both together.
TEST(LoomHppTest, GroupLaunchesBlockingSendAndRecvTogether) {
  loomUniqueId id = loom::Comm::uniqueId();
  auto body = [&](int rank) {
    loom::Comm comm(3, id, rank);
    std::vector<int32_t> out(300001, rank), in(300001, -1);  // several FIFO slots
    loom::group([&] {
      comm.recv(std::span(in), (rank + 2) % 3);
      comm.send(std::span(out), (rank + 1) % 3);
    });
    for (int32_t v : in) ASSERT_EQ(v, (rank + 2) % 3);
  };
  std::vector<std::thread> ranks;
  for (int r = 0; r < 3; ++r) ranks.emplace_back(body, r);
  for (auto& t : ranks) t.join();
}

}  // namespace

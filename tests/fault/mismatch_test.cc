// Ranks that disagree about a call fail, whatever the timing: every message
// carries its operation's label (src/transport/message_label.h), so the
// first message a rank receives from a peer that called something else ends
// the call with a sentence naming both calls. Every rank gets an error, from
// the mismatched call itself or, when its own part of that call needed
// nothing from the disagreeing rank (a Broadcast root, the ranks upstream of
// it in a chain, a Send), from its next call; no rank returns success from
// both. The fault table in docs/RELIABILITY.md runs these 20 times each
// (scripts/fault-table.sh).
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "support/rank_harness.h"

namespace loom::test {
namespace {

enum class Mismatch { kCount, kDtype, kOp, kRoot, kKind, kPointToPointCount };

struct Call {
  std::function<loomResult_t(loomComm_t, int rank, int nranks, bool odd, size_t count)> run;
  // How the well-behaved ranks' and the odd rank's calls are described.
  std::function<std::string(bool odd, size_t count)> describe;
};

std::string allReduceOf(size_t count, const char* type, const char* op) {
  return "AllReduce #1 of " + std::to_string(count) + " " + type + " (" + op + ")";
}

Call callFor(Mismatch mismatch) {
  switch (mismatch) {
    case Mismatch::kCount:
      return {[](loomComm_t comm, int, int, bool odd, size_t count) {
                const size_t n = odd ? count - 1 : count;
                std::vector<float> in(n, 1.0f), out(n);
                return loomAllReduce(in.data(), out.data(), n, loomFloat32, loomSum, comm, nullptr, nullptr);
              },
              [](bool odd, size_t count) { return allReduceOf(odd ? count - 1 : count, "float32", "sum"); }};
    case Mismatch::kDtype:
      return {[](loomComm_t comm, int, int, bool odd, size_t count) {
                std::vector<float> in(count, 1.0f), out(count);
                return loomAllReduce(in.data(), out.data(), count, odd ? loomInt32 : loomFloat32, loomSum, comm,
                                     nullptr, nullptr);
              },
              [](bool odd, size_t count) { return allReduceOf(count, odd ? "int32" : "float32", "sum"); }};
    case Mismatch::kOp:
      return {[](loomComm_t comm, int, int, bool odd, size_t count) {
                std::vector<float> in(count, 1.0f), out(count);
                return loomAllReduce(in.data(), out.data(), count, loomFloat32, odd ? loomMax : loomSum, comm, nullptr,
                                     nullptr);
              },
              [](bool odd, size_t count) { return allReduceOf(count, "float32", odd ? "max" : "sum"); }};
    case Mismatch::kRoot:
      return {[](loomComm_t comm, int, int, bool odd, size_t count) {
                std::vector<float> data(count, 1.0f);
                return loomBroadcast(data.data(), data.data(), count, loomFloat32, odd ? 1 : 0, comm, nullptr, nullptr);
              },
              [](bool odd, size_t count) {
                return "Broadcast #1 of " + std::to_string(count) + " float32 with root " + (odd ? "1" : "0");
              }};
    case Mismatch::kKind:
      return {[](loomComm_t comm, int, int nranks, bool odd, size_t count) {
                std::vector<float> in(count, 1.0f), out(count * nranks);
                if (odd) return loomAllGather(in.data(), out.data(), count, loomFloat32, comm, nullptr, nullptr);
                return loomAllReduce(in.data(), out.data(), count, loomFloat32, loomSum, comm, nullptr, nullptr);
              },
              [](bool odd, size_t count) {
                return odd ? "AllGather #1 of " + std::to_string(count) + " float32"
                           : allReduceOf(count, "float32", "sum");
              }};
    case Mismatch::kPointToPointCount:
      // A ring of Send/Recv in one group; the odd rank expects fewer elements.
      return {[](loomComm_t comm, int rank, int nranks, bool odd, size_t count) {
                std::vector<float> out(count, 1.0f), in(count);
                loomGroupStart();
                loomSend(out.data(), count, loomFloat32, (rank + 1) % nranks, comm, nullptr, nullptr);
                loomRecv(in.data(), odd ? count / 2 : count, loomFloat32, (rank + nranks - 1) % nranks, comm, nullptr,
                         nullptr);
                return loomGroupEnd();
              },
              [](bool odd, size_t count) { return std::to_string(odd ? count / 2 : count) + " float32"; }};
  }
  return {};
}

const char* mismatchName(Mismatch m) {
  switch (m) {
    case Mismatch::kCount: return "Count";
    case Mismatch::kDtype: return "Dtype";
    case Mismatch::kOp: return "Op";
    case Mismatch::kRoot: return "Root";
    case Mismatch::kKind: return "Kind";
    case Mismatch::kPointToPointCount: return "PointToPointCount";
  }
  return "?";
}

// Small counts take the one-step all-pairs path; large ones many FIFO laps
// of the ring.
constexpr size_t kSmall = 7, kLarge = 300001;

using Params = std::tuple<Mismatch, int, size_t>;

class MismatchTest : public ::testing::TestWithParam<Params> {};

TEST_P(MismatchTest, EveryRankGetsTheError) {
  const auto [mismatch, nranks, count] = GetParam();
  HarnessOptions options;
  options.timeoutMs = 120000;  // far longer than the test: a mismatch is named, never timed out
  runRanks(
      RankMode::kProcesses, nranks,
      [&](const RankContext& ctx) {
        const Call call = callFor(mismatch);
        const int oddRank = ctx.nranks / 2;
        const bool odd = ctx.rank == oddRank;
        loomResult_t rc = call.run(ctx.comm, ctx.rank, ctx.nranks, odd, count);
        std::string where = "the mismatched call";
        if (rc == loomSuccess) {
          // Its part needed nothing from the odd rank: the next call says.
          rc = loomBarrier(ctx.comm, nullptr);
          where = "the Barrier after the mismatched call";
        }
        ASSERT_NE(rc, loomSuccess) << "rank " << ctx.rank << " got no error from the mismatched call nor the next";
        EXPECT_TRUE(rc == loomInvalidUsage || rc == loomRemoteError)
            << where << " returned " << loomGetErrorString(rc) << ": " << loomCommGetLastError(ctx.comm);
        const std::string sentence = loomCommGetLastError(ctx.comm);
        const std::string normal = call.describe(false, count), other = call.describe(true, count);
        const bool namesNormal = sentence.find(normal) != std::string::npos;
        const bool namesOther = sentence.find(other) != std::string::npos;
        // The rank that found it named what it received and what it expected
        // (others quote its sentence); a message left over from the
        // mismatched call and found by the next one is named by its label.
        if (sentence.find("does not match") != std::string::npos ||
            sentence.find("this Recv expects") != std::string::npos)
          EXPECT_TRUE(namesNormal && namesOther) << "rank " << ctx.rank << " (" << where << "): " << sentence;
        else
          EXPECT_TRUE(namesNormal || namesOther) << "rank " << ctx.rank << " (" << where << "): " << sentence;
      },
      options);
}

std::string paramName(const ::testing::TestParamInfo<Params>& info) {
  const auto [mismatch, nranks, count] = info.param;
  return std::string(mismatchName(mismatch)) + "_" + std::to_string(nranks) + "ranks_" +
         (count == kSmall ? "small" : "large");
}

INSTANTIATE_TEST_SUITE_P(Calls, MismatchTest,
                         ::testing::Combine(::testing::Values(Mismatch::kCount, Mismatch::kDtype, Mismatch::kOp,
                                                              Mismatch::kRoot, Mismatch::kKind,
                                                              Mismatch::kPointToPointCount),
                                            ::testing::Values(2, 3, 5, 8), ::testing::Values(kSmall, kLarge)),
                         paramName);

}  // namespace
}  // namespace loom::test

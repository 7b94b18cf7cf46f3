// Every collective x dtype x op x size class x placement, on 1 to 8 ranks
// as threads and as processes, checked exactly against the independent
// reference in tests/support/reference.
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/handles.h"
#include "support/buffers.h"
#include "support/rank_harness.h"
#include "support/reference.h"
#include "support/scoped_env.h"

namespace loom::test {
namespace {

// The large class: odd, and many slots and FIFO laps (8 slots of 128 KiB
// by default). Under a sanitizer (scripts/sanitize.sh), where every byte
// costs several times as much, a quarter of it: still several laps for the
// wider types, while the plain build's suite runs the full size.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr size_t kLargeCount = (1 << 18) + 3;
#else
constexpr size_t kLargeCount = (1 << 20) + 3;
#endif
const size_t kCounts[] = {0, 1, 7, 1023, kLargeCount};

using Dtypes = std::vector<loomDataType_t>;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// A sanitizer checks how bytes are reached, which depends on the element's
// width and on the schedule, not on the arithmetic: one type per width,
// and sum, max and avg (avg's last step divides). The reduce kernels of
// every type and op run under the sanitizers in reduce_test.cc; the plain
// build's suite checks every type and op here.
const Dtypes kDtypes = {loomInt8, loomFloat16, loomFloat32, loomFloat64};
const loomRedOp_t kOps[] = {loomSum, loomMax, loomAvg};
#else
const Dtypes kDtypes = {loomInt8,   loomUint8,   loomInt32,    loomUint32,  loomInt64,
                        loomUint64, loomFloat16, loomBfloat16, loomFloat32, loomFloat64};
const loomRedOp_t kOps[] = {loomSum, loomProd, loomMax, loomMin, loomAvg};
#endif

// Collectives whose count is per rank scale the large class down, so every
// rank count moves about the same number of bytes (odd, still many slots).
size_t perRankCount(size_t count, int nranks) {
  return count == kLargeCount ? (count / nranks) | 1 : count;
}

// Alternates aligned and odd addresses across cases.
size_t misalignFor(size_t caseIndex) {
  return caseIndex % 3;
}

std::string caseName(const char* what, loomDataType_t dtype, loomRedOp_t op, size_t count, bool inPlace, int rank) {
  return std::string(what) + " " + loomTypeName(dtype) + " " + loomOpName(op) + " count " + std::to_string(count) +
         (inPlace ? " in-place" : " out-of-place") + " on rank " + std::to_string(rank);
}

void expectSame(const Bytes& expected, const unsigned char* actual, loomDataType_t dtype, const std::string& what) {
  long bad = firstMismatch(expected, actual, loomTypeSize(dtype));
  if (bad < 0) return;
  const size_t size = loomTypeSize(dtype);
  ADD_FAILURE() << what << ": element " << bad << " is " << describeElement(dtype, actual + bad * size) << ", expected "
                << describeElement(dtype, &expected[bad * size]);
}

void expectOk(loomResult_t rc, loomComm_t comm, const std::string& what) {
  EXPECT_EQ(rc, loomSuccess) << what << ": " << loomGetErrorString(rc) << ": " << loomCommGetLastError(comm);
}

class CollectivesTest : public ::testing::TestWithParam<std::tuple<RankMode, int>> {
 protected:
  RankMode mode() const { return std::get<0>(GetParam()); }
  int nranks() const { return std::get<1>(GetParam()); }
};

void checkAllReduce(const RankContext& ctx, std::initializer_list<size_t> counts, const Dtypes& dtypes = kDtypes) {
  size_t caseIndex = 0;
  for (loomDataType_t dtype : dtypes) {
    for (loomRedOp_t op : kOps) {
      ReductionReference reference(dtype, op, ctx.nranks);
      for (size_t count : counts) {
        for (bool inPlace : {false, true}) {
          const size_t bytes = count * loomTypeSize(dtype);
          Bytes input = makeInput(dtype, op, ctx.rank, 0, count);
          Buffer send(input, misalignFor(caseIndex++));
          Buffer recv(bytes, misalignFor(caseIndex++));
          unsigned char* out = inPlace ? send.data() : recv.data();
          std::string what = caseName("AllReduce", dtype, op, count, inPlace, ctx.rank);
          expectOk(loomAllReduce(send.data(), out, count, dtype, op, ctx.comm, nullptr, nullptr), ctx.comm, what);
          expectSame(reference.expected(0, count), out, dtype, what);
        }
      }
    }
  }
}

// Loom picks all-pairs for small messages and the ring for large ones.
TEST_P(CollectivesTest, AllReduce) {
  runRanks(mode(), nranks(), [](const RankContext& ctx) { checkAllReduce(ctx, {0, 1, 7, 1023, kLargeCount}); });
}

// Each algorithm forced over the small sizes the other one normally takes.
TEST_P(CollectivesTest, AllReduceRingOnSmallCounts) {
  ScopedEnv force("LOOM_ALGO", "ring");
  runRanks(mode(), nranks(), [](const RankContext& ctx) { checkAllReduce(ctx, {0, 1, 7, 1023}); });
}

TEST_P(CollectivesTest, AllReduceAllPairsUpToOneSlot) {
  ScopedEnv force("LOOM_ALGO", "allpairs");
  runRanks(mode(), nranks(), [](const RankContext& ctx) { checkAllReduce(ctx, {1, 7, 1023, 16381}); });
}

// The logarithmic schedules, forced, across slots and odd counts: every
// dtype and op through the C API, against the reference.
TEST_P(CollectivesTest, AllReduceDoubleTreeAndHalvingDoubling) {
  for (const char* algorithm : {"tree", "halvingdoubling"}) {
    SCOPED_TRACE(algorithm);
    ScopedEnv force("LOOM_ALGO", algorithm);
    runRanks(mode(), nranks(), [](const RankContext& ctx) { checkAllReduce(ctx, {0, 1, 7, 1023, 16381}); });
  }
}

void checkReduceScatter(const RankContext& ctx, const Dtypes& dtypes) {
  size_t caseIndex = 0;
  for (loomDataType_t dtype : dtypes) {
    for (loomRedOp_t op : kOps) {
      ReductionReference reference(dtype, op, ctx.nranks);
      for (size_t total : kCounts) {
        const size_t count = perRankCount(total, ctx.nranks);
        const size_t size = loomTypeSize(dtype);
        for (bool inPlace : {false, true}) {
          Buffer send(makeInput(dtype, op, ctx.rank, 0, count * ctx.nranks), misalignFor(caseIndex++));
          Buffer recv(count * size, misalignFor(caseIndex++));
          unsigned char* out = inPlace ? send.data() + ctx.rank * count * size : recv.data();
          std::string what = caseName("ReduceScatter", dtype, op, count, inPlace, ctx.rank);
          expectOk(loomReduceScatter(send.data(), out, count, dtype, op, ctx.comm, nullptr, nullptr), ctx.comm, what);
          expectSame(reference.expected(ctx.rank * count, count), out, dtype, what);
        }
      }
    }
  }
}

void checkReduceScatter(const RankContext& ctx) {
  checkReduceScatter(ctx, kDtypes);
}

TEST_P(CollectivesTest, ReduceScatter) {
  runRanks(mode(), nranks(), [](const RankContext& ctx) { checkReduceScatter(ctx); });
}

// Recursive halving, forced: every dtype, op and size class, in and out of
// place, through the C API.
void checkReduce(const RankContext& ctx) {
  size_t caseIndex = 0;
  for (loomDataType_t dtype : kDtypes) {
    for (loomRedOp_t op : kOps) {
      ReductionReference reference(dtype, op, ctx.nranks);
      for (size_t count : kCounts) {
        for (bool inPlace : {false, true}) {
          const int root = static_cast<int>(caseIndex / 2 % ctx.nranks);
          Buffer send(makeInput(dtype, op, ctx.rank, 0, count), misalignFor(caseIndex++));
          Buffer recv(count * loomTypeSize(dtype), misalignFor(caseIndex++));
          unsigned char* out = inPlace ? send.data() : recv.data();
          std::string what = caseName("Reduce", dtype, op, count, inPlace, ctx.rank) + " root " + std::to_string(root);
          expectOk(loomReduce(send.data(), out, count, dtype, op, root, ctx.comm, nullptr, nullptr), ctx.comm, what);
          if (ctx.rank == root) expectSame(reference.expected(0, count), out, dtype, what);
        }
      }
    }
  }
}

TEST_P(CollectivesTest, Reduce) {
  runRanks(mode(), nranks(), checkReduce);
}

void checkAllGather(const RankContext& ctx, const Dtypes& dtypes) {
  size_t caseIndex = 0;
  for (loomDataType_t dtype : dtypes) {
    for (size_t total : kCounts) {
      const size_t count = perRankCount(total, ctx.nranks);
      const size_t blockBytes = count * loomTypeSize(dtype);
      for (bool inPlace : {false, true}) {
        Bytes mine = makeInput(dtype, loomSum, ctx.rank, 0, count, true);
        Buffer send(mine, misalignFor(caseIndex++));
        Buffer recv(blockBytes * ctx.nranks, misalignFor(caseIndex++));
        const unsigned char* in = send.data();
        if (inPlace) {
          if (blockBytes > 0) std::memcpy(recv.data() + ctx.rank * blockBytes, mine.data(), blockBytes);
          in = recv.data() + ctx.rank * blockBytes;
        }
        std::string what = caseName("AllGather", dtype, loomSum, count, inPlace, ctx.rank);
        expectOk(loomAllGather(in, recv.data(), count, dtype, ctx.comm, nullptr, nullptr), ctx.comm, what);
        for (int q = 0; q < ctx.nranks; ++q)
          expectSame(makeInput(dtype, loomSum, q, 0, count, true), recv.data() + q * blockBytes, dtype,
                     what + ", block of rank " + std::to_string(q));
      }
    }
  }
}

void checkAllGather(const RankContext& ctx) {
  checkAllGather(ctx, kDtypes);
}

TEST_P(CollectivesTest, AllGather) {
  runRanks(mode(), nranks(), [](const RankContext& ctx) { checkAllGather(ctx); });
}

// Bruck's log2(P) steps, forced: every dtype and size class, in and out of
// place, through the C API.
TEST_P(CollectivesTest, AllGatherBruck) {
  ScopedEnv force("LOOM_ALGO", "allgather:bruck");
  runRanks(mode(), nranks(), [](const RankContext& ctx) { checkAllGather(ctx); });
}

// Recursive halving alone (ReduceScatter) and doubling alone (AllGather).
TEST_P(CollectivesTest, HalvingDoublingReduceScatterAndAllGather) {
  ScopedEnv force("LOOM_ALGO", "reducescatter:halvingdoubling;allgather:halvingdoubling");
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    checkReduceScatter(ctx);
    checkAllGather(ctx);
  });
}

// Single-copy reads of peers' buffers (LOOM_CMA=1, cross-memory attach
// between processes, plain reads between threads) forced at every size class.
TEST_P(CollectivesTest, DirectAllReduceAllGatherReduceScatter) {
  ScopedEnv cma("LOOM_CMA", "1");
  ScopedEnv force("LOOM_ALGO", "direct");
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    checkAllReduce(ctx, {0, 1, 7, 1023, kLargeCount});
    checkAllGather(ctx);
    checkReduceScatter(ctx);
  });
}

// Collectives this rank's communicator ran single-copy on registered buffers.
uint64_t singleCopyCalls(loomComm_t comm) {
  return communicatorOf(comm)->windows().singleCopyCalls();
}

// Registered buffers (loomCommRegister): every rank's buffers are mapped in
// every process, so AllReduce, AllGather and ReduceScatter copy straight
// between ranks' buffers. LOOM_ALGO leaves them registered alone (AllReduce
// all-pairs too, for empty calls), so every size class goes there, and
// the count of single-copy calls proves they went.
TEST_P(CollectivesTest, RegisteredAllReduceAllGatherReduceScatter) {
  ScopedEnv noAllPairs("LOOM_ALLPAIRS_MAX_BYTES", "0");
  ScopedEnv onlyRegistered("LOOM_ALGO", "allreduce:registered,allpairs;allgather:registered;reducescatter:registered");
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    RegisteredArena arena(ctx.comm, 40 << 20);
    const uint64_t before = singleCopyCalls(ctx.comm);
    checkAllReduce(ctx, {0, 1, 7, 1023, kLargeCount});
    checkAllGather(ctx);
    checkReduceScatter(ctx);
    // Per dtype: AllReduce every op x 4 counts (count 0 fits all-pairs,
    // which no threshold closes), AllGather 5 counts, ReduceScatter every op
    // x 5 counts; each in and out of place. One rank has no peers.
    const uint64_t ops = std::size(kOps);
    const uint64_t calls = ctx.nranks == 1 ? 0 : kDtypes.size() * 2 * (ops * 4 + 5 + ops * 5);
    EXPECT_EQ(singleCopyCalls(ctx.comm) - before, calls) << "rank " << ctx.rank;
  });
}

// A call whose buffers are registered on some ranks only runs through the
// FIFOs (every rank learns that from the swapped addresses), with the same
// results. (The fallback does not depend on the type: two suffice.)
TEST_P(CollectivesTest, RegisteredOnSomeRanksFallsBackAlike) {
  ScopedEnv everySize("LOOM_DIRECT_MIN_BYTES", "0");
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    auto arena = std::make_unique<RegisteredArena>(ctx.comm, 40 << 20);
    if (ctx.rank % 2 == 1) RegisteredArena::current() = nullptr;  // odd ranks use the heap
    const Dtypes someDtypes = {loomInt8, loomFloat32};
    checkAllReduce(ctx, {1023, kLargeCount}, someDtypes);
    checkAllGather(ctx, someDtypes);
    checkReduceScatter(ctx, someDtypes);
    EXPECT_EQ(singleCopyCalls(ctx.comm), 0u) << "rank " << ctx.rank;
    RegisteredArena::current() = arena.get();
    arena.reset();
  });
}

void checkBroadcast(const RankContext& ctx) {
  size_t caseIndex = 0;
  for (loomDataType_t dtype : kDtypes) {
    for (size_t count : kCounts) {
      for (bool inPlace : {false, true}) {
        const int root = static_cast<int>(caseIndex / 2 % ctx.nranks);
        const size_t bytes = count * loomTypeSize(dtype);
        Buffer send(ctx.rank == root ? makeInput(dtype, loomSum, root, 0, count, true) : Bytes(bytes),
                    misalignFor(caseIndex++));
        Buffer recv(bytes, misalignFor(caseIndex++));
        unsigned char* out = inPlace ? send.data() : recv.data();
        std::string what =
            caseName("Broadcast", dtype, loomSum, count, inPlace, ctx.rank) + " root " + std::to_string(root);
        expectOk(loomBroadcast(send.data(), out, count, dtype, root, ctx.comm, nullptr, nullptr), ctx.comm, what);
        expectSame(makeInput(dtype, loomSum, root, 0, count, true), out, dtype, what);
      }
    }
  }
}

TEST_P(CollectivesTest, Broadcast) {
  runRanks(mode(), nranks(), checkBroadcast);
}

// Broadcast and Reduce take the chain or a tree (binomial or binary), as the
// cost model finds quickest (plan.h): each forced over every size class and
// root.
TEST_P(CollectivesTest, TreeBroadcastAndReduceAtEverySize) {
  ScopedEnv force("LOOM_ALGO", "tree");
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    checkBroadcast(ctx);
    checkReduce(ctx);
  });
}

TEST_P(CollectivesTest, BinomialBroadcastAndReduceAtEverySize) {
  ScopedEnv force("LOOM_ALGO", "binomial");
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    checkBroadcast(ctx);
    checkReduce(ctx);
  });
}

TEST_P(CollectivesTest, ChainBroadcastAndReduceAtEverySize) {
  ScopedEnv chainsOnly("LOOM_TREE_MAX_BYTES", "0");
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    checkBroadcast(ctx);
    checkReduce(ctx);
  });
}

TEST_P(CollectivesTest, AllToAll) {
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    size_t caseIndex = 0;
    for (loomDataType_t dtype : kDtypes) {
      for (size_t total : kCounts) {
        const size_t count = perRankCount(total, ctx.nranks);
        const size_t blockBytes = count * loomTypeSize(dtype);
        for (bool inPlace : {false, true}) {
          Buffer send(makeInput(dtype, loomSum, ctx.rank, 0, count * ctx.nranks, true), misalignFor(caseIndex++));
          Buffer recv(blockBytes * ctx.nranks, misalignFor(caseIndex++));
          unsigned char* out = inPlace ? send.data() : recv.data();
          std::string what = caseName("AllToAll", dtype, loomSum, count, inPlace, ctx.rank);
          expectOk(loomAllToAll(send.data(), out, count, dtype, ctx.comm, nullptr, nullptr), ctx.comm, what);
          for (int q = 0; q < ctx.nranks; ++q)
            expectSame(makeInput(dtype, loomSum, q, ctx.rank * count, count, true), out + q * blockBytes, dtype,
                       what + ", block from rank " + std::to_string(q));
        }
      }
    }
  });
}

// AllToAllv with a count per pair (zeros among them, and pairs of several
// slots), blocks apart from one another in both buffers, every dtype.
size_t pairCount(int from, int to, size_t scale) {
  const size_t k = static_cast<size_t>(from * 3 + to * 5) % 4;
  return k == 0 ? 0 : k * scale + static_cast<size_t>(from);
}

TEST_P(CollectivesTest, AllToAllvWithACountPerPair) {
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    const int n = ctx.nranks, me = ctx.rank;
    size_t caseIndex = 0;
    for (loomDataType_t dtype : kDtypes) {
      for (size_t scale : {size_t{1}, size_t{1000}, size_t{40000}}) {
        // Displacements with a gap of 3 elements before every block.
        auto layout = [&](auto countOf, std::vector<size_t>& counts, std::vector<size_t>& displs) {
          size_t at = 0;
          for (int q = 0; q < n; ++q) {
            counts.push_back(countOf(q));
            displs.push_back(at + 3);
            at += 3 + counts.back();
          }
          return at;
        };
        std::vector<size_t> sendCounts, sdispls, recvCounts, rdispls;
        const size_t sendTotal = layout([&](int q) { return pairCount(me, q, scale); }, sendCounts, sdispls);
        const size_t recvTotal = layout([&](int q) { return pairCount(q, me, scale); }, recvCounts, rdispls);
        Buffer send(makeInput(dtype, loomSum, me, 0, sendTotal, true), misalignFor(caseIndex++));
        Buffer recv(recvTotal * loomTypeSize(dtype), misalignFor(caseIndex++));
        std::string what = caseName("AllToAllv", dtype, loomSum, scale, false, me);
        expectOk(loomAllToAllv(send.data(), sendCounts.data(), sdispls.data(), recv.data(), recvCounts.data(),
                               rdispls.data(), dtype, ctx.comm, nullptr, nullptr),
                 ctx.comm, what);
        for (int q = 0; q < n; ++q) {
          // Where rank q put its block for this rank.
          size_t theirDispl = 0;
          for (int p = 0; p < me; ++p) theirDispl += 3 + pairCount(q, p, scale);
          theirDispl += 3;
          expectSame(makeInput(dtype, loomSum, q, theirDispl, recvCounts[q], true),
                     recv.data() + rdispls[q] * loomTypeSize(dtype), dtype,
                     what + ", block from rank " + std::to_string(q));
        }
      }
    }
  });
}

// Ranks that disagree on what one sends the other fail on that pair's
// first message, naming both counts, instead of reading a block cut
// another way.
TEST_P(CollectivesTest, AllToAllvPairsThatDisagreeFailNamingBothCounts) {
  if (nranks() < 2) GTEST_SKIP() << "needs a pair";
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    const int n = ctx.nranks;
    std::vector<size_t> sendCounts(n, 4), recvCounts(n, 4), displs(n);
    for (int q = 0; q < n; ++q) displs[q] = 8 * q;
    if (ctx.rank == 0) recvCounts[1] = 5;  // rank 1 sends 4
    std::vector<int32_t> send(8 * n, 1), recv(8 * n, 0);
    const loomResult_t rc = loomAllToAllv(send.data(), sendCounts.data(), displs.data(), recv.data(), recvCounts.data(),
                                          displs.data(), loomInt32, ctx.comm, nullptr, nullptr);
    if (ctx.rank == 0) {
      EXPECT_EQ(rc, loomInvalidUsage);
      const std::string sentence = loomCommGetLastError(ctx.comm);
      EXPECT_NE(sentence.find("AllToAllv #1 on rank 0"), std::string::npos) << sentence;
      EXPECT_NE(sentence.find("rank 1 sends this rank 4 int32, but this rank expects 5 from it"), std::string::npos)
          << sentence;
    }
  });
}

// loomRedOpCreatePreMulSum: every rank's input times its own scalar,
// summed, for AllReduce (in place), ReduceScatter and Reduce.
template <typename T>
void checkPreMulSum(const RankContext& ctx, loomDataType_t dtype) {
  const int n = ctx.nranks, me = ctx.rank;
  const size_t count = 1003;
  const T scalar = static_cast<T>(me + 2);
  loomRedOp_t op;
  ASSERT_EQ(loomRedOpCreatePreMulSum(&op, &scalar, dtype, ctx.comm), loomSuccess) << loomCommGetLastError(ctx.comm);
  auto input = [](int rank, size_t i) { return static_cast<T>(i % 5 + rank); };
  auto expected = [&](size_t i) {
    T sum = 0;
    for (int r = 0; r < n; ++r) sum += static_cast<T>(r + 2) * input(r, i);
    return sum;
  };
  const std::string name = loomTypeName(dtype);
  std::vector<T> data(count * n);
  for (size_t i = 0; i < data.size(); ++i) data[i] = input(me, i);
  std::vector<T> inPlace(data.begin(), data.begin() + count);
  expectOk(loomAllReduce(inPlace.data(), inPlace.data(), count, dtype, op, ctx.comm, nullptr, nullptr), ctx.comm,
           "PreMulSum AllReduce " + name);
  for (size_t i = 0; i < count; ++i) ASSERT_EQ(inPlace[i], expected(i)) << name << " AllReduce element " << i;
  std::vector<T> block(count);
  expectOk(loomReduceScatter(data.data(), block.data(), count, dtype, op, ctx.comm, nullptr, nullptr), ctx.comm,
           "PreMulSum ReduceScatter " + name);
  for (size_t i = 0; i < count; ++i)
    ASSERT_EQ(block[i], expected(me * count + i)) << name << " ReduceScatter element " << i;
  std::vector<T> reduced(count);
  expectOk(loomReduce(data.data(), reduced.data(), count, dtype, op, n - 1, ctx.comm, nullptr, nullptr), ctx.comm,
           "PreMulSum Reduce " + name);
  if (me == n - 1) {
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(reduced[i], expected(i)) << name << " Reduce element " << i;
  }
  EXPECT_EQ(loomRedOpDestroy(op, ctx.comm), loomSuccess);
  // Once destroyed, the op is refused before anything is sent.
  EXPECT_EQ(loomAllReduce(data.data(), block.data(), count, dtype, op, ctx.comm, nullptr, nullptr),
            loomInvalidArgument);
  EXPECT_NE(std::string(loomCommGetLastError(ctx.comm)).find("nor a live op of this communicator"), std::string::npos)
      << loomCommGetLastError(ctx.comm);
  EXPECT_EQ(loomRedOpDestroy(op, ctx.comm), loomInvalidArgument);
}

TEST_P(CollectivesTest, PreMulSumScalesEveryRanksInput) {
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    checkPreMulSum<float>(ctx, loomFloat32);
    checkPreMulSum<double>(ctx, loomFloat64);
    checkPreMulSum<int32_t>(ctx, loomInt32);
    checkPreMulSum<int64_t>(ctx, loomInt64);
    // An op is for the dtype it was made for.
    const float half = 0.5f;
    loomRedOp_t op;
    ASSERT_EQ(loomRedOpCreatePreMulSum(&op, &half, loomFloat32, ctx.comm), loomSuccess);
    double value = 1, out = 0;
    EXPECT_EQ(loomAllReduce(&value, &out, 1, loomFloat64, op, ctx.comm, nullptr, nullptr), loomInvalidArgument);
    EXPECT_NE(std::string(loomCommGetLastError(ctx.comm))
                  .find("was made for float32, and this call's dtype is "
                        "float64"),
              std::string::npos)
        << loomCommGetLastError(ctx.comm);
    EXPECT_EQ(loomRedOpCreatePreMulSum(&op, nullptr, loomFloat32, ctx.comm), loomInvalidArgument);
  });
}

// Gather and Scatter from every root, every dtype and count, in and out of
// place at the root; buffers that matter only at the root are NULL elsewhere.
TEST_P(CollectivesTest, GatherAndScatterFromEveryRoot) {
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    size_t caseIndex = 0;
    for (loomDataType_t dtype : kDtypes) {
      for (size_t total : kCounts) {
        const size_t count = perRankCount(total, ctx.nranks);
        const size_t blockBytes = count * loomTypeSize(dtype);
        for (int root = 0; root < ctx.nranks; ++root) {
          for (bool inPlace : {false, true}) {
            const bool atRoot = ctx.rank == root;
            std::string what =
                caseName("Gather", dtype, loomSum, count, inPlace, ctx.rank) + " root " + std::to_string(root);
            Buffer whole(blockBytes * ctx.nranks, misalignFor(caseIndex++));
            Buffer mine(makeInput(dtype, loomSum, ctx.rank, 0, count, true), misalignFor(caseIndex++));
            const unsigned char* send = mine.data();
            if (atRoot && inPlace) {
              std::memcpy(whole.data() + root * blockBytes, mine.data(), blockBytes);
              send = whole.data() + root * blockBytes;
            }
            expectOk(loomGather(send, atRoot ? whole.data() : nullptr, count, dtype, root, ctx.comm, nullptr, nullptr),
                     ctx.comm, what);
            if (atRoot)
              for (int q = 0; q < ctx.nranks; ++q)
                expectSame(makeInput(dtype, loomSum, q, 0, count, true), whole.data() + q * blockBytes, dtype,
                           what + ", block of rank " + std::to_string(q));

            what = caseName("Scatter", dtype, loomSum, count, inPlace, ctx.rank) + " root " + std::to_string(root);
            Buffer blocks(makeInput(dtype, loomSum, 100 + root, 0, count * ctx.nranks, true), misalignFor(caseIndex++));
            Buffer out(blockBytes, misalignFor(caseIndex++));
            unsigned char* recv = atRoot && inPlace ? blocks.data() + ctx.rank * blockBytes : out.data();
            expectOk(
                loomScatter(atRoot ? blocks.data() : nullptr, recv, count, dtype, root, ctx.comm, nullptr, nullptr),
                ctx.comm, what);
            expectSame(makeInput(dtype, loomSum, 100 + root, ctx.rank * count, count, true), recv, dtype, what);
          }
        }
      }
    }
  });
}

TEST_P(CollectivesTest, SendRecvAroundTheRing) {
  runRanks(mode(), nranks(), [](const RankContext& ctx) {
    const int next = (ctx.rank + 1) % ctx.nranks, prev = (ctx.rank + ctx.nranks - 1) % ctx.nranks;
    if (ctx.nranks == 1) {  // no peer: sending to oneself is refused
      unsigned char byte = 0;
      EXPECT_EQ(loomSend(&byte, 1, loomUint8, 0, ctx.comm, nullptr, nullptr), loomInvalidArgument);
      EXPECT_EQ(loomRecv(&byte, 1, loomUint8, 0, ctx.comm, nullptr, nullptr), loomInvalidArgument);
      return;
    }
    size_t caseIndex = 0;
    for (loomDataType_t dtype : kDtypes) {
      for (size_t count : kCounts) {
        Buffer send(makeInput(dtype, loomSum, ctx.rank, 0, count, true), misalignFor(caseIndex++));
        Buffer recv(count * loomTypeSize(dtype), misalignFor(caseIndex++));
        std::string what = caseName("SendRecv", dtype, loomSum, count, false, ctx.rank);
        // Operations run in issue order: even ranks send first, odd ranks
        // receive first, so no two neighbours both wait to send.
        if (ctx.rank % 2 == 0) {
          expectOk(loomSend(send.data(), count, dtype, next, ctx.comm, nullptr, nullptr), ctx.comm, what);
          expectOk(loomRecv(recv.data(), count, dtype, prev, ctx.comm, nullptr, nullptr), ctx.comm, what);
        } else {
          expectOk(loomRecv(recv.data(), count, dtype, prev, ctx.comm, nullptr, nullptr), ctx.comm, what);
          expectOk(loomSend(send.data(), count, dtype, next, ctx.comm, nullptr, nullptr), ctx.comm, what);
        }
        expectSame(makeInput(dtype, loomSum, prev, 0, count, true), recv.data(), dtype, what);
      }
    }
  });
}

// Under the default (all-pairs) and under each other Barrier algorithm.
TEST_P(CollectivesTest, BarrierHoldsEveryRankUntilAllArrive) {
  // Shared with forked ranks too: mapped before the harness forks.
  constexpr int kRounds = 3;
  const char* const algorithms[] = {"", "barrier:dissemination", "barrier:ring"};
  constexpr int kCounters = kRounds * 3;
  auto* arrivals = static_cast<std::atomic<int>*>(
      mmap(nullptr, sizeof(std::atomic<int>) * kCounters, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(arrivals, MAP_FAILED);
  for (int i = 0; i < kCounters; ++i) new (&arrivals[i]) std::atomic<int>(0);
  for (int a = 0; a < 3; ++a) {
    SCOPED_TRACE(algorithms[a]);
    ScopedEnv force("LOOM_ALGO", algorithms[a]);
    std::atomic<int>* mine = arrivals + a * kRounds;
    runRanks(mode(), nranks(), [mine](const RankContext& ctx) {
      for (int round = 0; round < kRounds; ++round) {
        // Late ranks arrive last: the barrier must hold the early ones.
        std::this_thread::sleep_for(std::chrono::milliseconds(10 * ((ctx.rank + round) % ctx.nranks)));
        mine[round].fetch_add(1);
        expectOk(loomBarrier(ctx.comm, nullptr), ctx.comm, "Barrier");
        EXPECT_EQ(mine[round].load(), ctx.nranks) << "rank " << ctx.rank << " left barrier " << round << " early";
      }
    });
  }
  munmap(arrivals, sizeof(std::atomic<int>) * kCounters);
}

// Hierarchical AllReduce, AllGather and ReduceScatter (hierarchical.h) on
// fake hosts: LOOM_HOST_ID is per process, so ranks run as processes. 3 ranks per host
// cut the AllReduce buffer into blocks of unequal sizes, 3 hosts make the
// step across them a ring, and counts below a host's rank count leave some
// blocks empty. On 4 hosts of 2 the lanes of small AllGathers and
// ReduceScatters cross in a logarithmic schedule. Hosts of 3 and 2 ranks,
// and of 1 and 3, carry the larger host's further blocks in second and
// third rounds.
class HierarchicalTest : public ::testing::TestWithParam<const char*> {
 protected:
  int ranksInLayout() const {
    int total = 0;
    for (const char* at = GetParam(); *at != '\0'; ++at)
      if (*at >= '0' && *at <= '9') total += *at - '0';
    return total;
  }
};

TEST_P(HierarchicalTest, AllReduceEveryDtypeOpAndSize) {
  ScopedEnv layout("LOOM_TEST_HOST_LAYOUT", GetParam());
  ScopedEnv force("LOOM_ALGO", "hierarchical");
  runRanks(RankMode::kProcesses, ranksInLayout(), [](const RankContext& ctx) {
    checkAllReduce(ctx, {0, 1, 2, 7, 1023, 16381, kLargeCount});
  });
}

// On two hosts the steps overlap, segment by segment, each half the
// link's FIFO: with two slots of 4 KiB a segment is one slot, so both
// lanes keep meeting a full FIFO, and odd counts end blocks mid-segment.
TEST_P(HierarchicalTest, AllReduceInSegmentsThroughTheSmallestFifos) {
  ScopedEnv layout("LOOM_TEST_HOST_LAYOUT", GetParam());
  ScopedEnv force("LOOM_ALGO", "hierarchical");
  ScopedEnv socketSlots("LOOM_SOCKET_SLOTS", "2");
  ScopedEnv socketSlotBytes("LOOM_SOCKET_SLOT_BYTES", "4096");
  ScopedEnv shmSlotBytes("LOOM_SHM_SLOT_BYTES", "4096");
  runRanks(RankMode::kProcesses, ranksInLayout(), [](const RankContext& ctx) {
    checkAllReduce(ctx, {1023, 16381, 100003}, {loomInt32, loomFloat32, loomFloat64});
  });
}

TEST_P(HierarchicalTest, ReduceScatterEveryDtypeOpAndSize) {
  ScopedEnv layout("LOOM_TEST_HOST_LAYOUT", GetParam());
  ScopedEnv force("LOOM_ALGO", "hierarchical");
  runRanks(RankMode::kProcesses, ranksInLayout(), [](const RankContext& ctx) { checkReduceScatter(ctx); });
}

TEST_P(HierarchicalTest, AllGatherEveryDtypeAndSize) {
  ScopedEnv layout("LOOM_TEST_HOST_LAYOUT", GetParam());
  ScopedEnv force("LOOM_ALGO", "hierarchical");
  runRanks(RankMode::kProcesses, ranksInLayout(), [](const RankContext& ctx) { checkAllGather(ctx); });
}

// Sums of floats that do not add exactly (the order of additions shows in
// the last bits) must come out bitwise the same on every rank, whichever
// algorithm runs: a gradient that differs between ranks makes replicas
// drift apart. Hosts a b c c b a: the ranks with local index 1 are 3, 4, 5
// on hosts c, b, a, the reverse of index 0's, so a step across hosts that
// combined in team order would add in another order there. Small and
// large counts, default choice (so the small AllReduce through host
// leaders and the large ring in steps both run).
TEST(HierarchicalLayoutTest, FloatSumsAreBitwiseTheSameOnEveryRank) {
  HarnessOptions options;
  options.createComm = false;
  runRanks(
      RankMode::kProcesses, 6,
      [](const RankContext& ctx) {
        const char* hosts[] = {"a", "b", "c", "c", "b", "a"};
        setenv("LOOM_HOST_ID", (std::string("bitwise-") + hosts[ctx.rank]).c_str(), 1);
        loomComm_t comm = nullptr;
        ASSERT_EQ(loomCommInitRank(&comm, ctx.nranks, *ctx.id, ctx.rank, nullptr), loomSuccess) << loomGetLastError();
        for (size_t count : {size_t{1}, size_t{257}, size_t{300001}}) {
          std::vector<float> values(count);
          for (size_t i = 0; i < count; ++i)
            values[i] = 0.1f * static_cast<float>(ctx.rank + 1) / static_cast<float>(i % 97 + 3) + 1e-7f * i;
          for (loomRedOp_t op : {loomSum, loomAvg}) {
            std::vector<float> result(count);
            ASSERT_EQ(loomAllReduce(values.data(), result.data(), count, loomFloat32, op, comm, nullptr, nullptr),
                      loomSuccess)
                << loomCommGetLastError(comm);
            std::vector<float> everyRank(count * ctx.nranks);
            ASSERT_EQ(loomAllGather(result.data(), everyRank.data(), count, loomFloat32, comm, nullptr, nullptr),
                      loomSuccess)
                << loomCommGetLastError(comm);
            for (int r = 1; r < ctx.nranks; ++r)
              EXPECT_EQ(std::memcmp(&everyRank[0], &everyRank[r * count], count * sizeof(float)), 0)
                  << loomOpName(op) << " of " << count << " floats: rank " << r << "'s result differs from rank 0's";
          }
        }
        EXPECT_EQ(loomCommDestroy(comm), loomSuccess);
      },
      options);
}

// Two ranks with slots of 4 KiB: a large call is hundreds of chunks
// against 8 slots, so both ranks keep meeting a full FIFO; odd counts make
// the last chunks of the two blocks differ. Over shared memory and over TCP (whose send slots free once the
// kernel took them, and whose frames leave partly from the user's buffer
// and partly from the slot when the socket fills). The ring of two is also
// the step across two hosts of every hierarchical algorithm.
class TwoRanksTest : public ::testing::TestWithParam<std::tuple<RankMode, const char*>> {
 protected:
  RankMode mode() const { return std::get<0>(GetParam()); }
  const char* transports() const { return std::get<1>(GetParam()); }
};

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
const Dtypes kTwoRankDtypes = {loomInt8, loomFloat64};
#else
const Dtypes kTwoRankDtypes = {loomInt8, loomFloat16, loomFloat32, loomFloat64};
#endif

TEST_P(TwoRanksTest, RingsOfTwoThroughFullFifos) {
  ScopedEnv onlyThese("LOOM_TRANSPORTS", transports());
  ScopedEnv shmSlots("LOOM_SHM_SLOT_BYTES", "4096");
  ScopedEnv socketSlots("LOOM_SOCKET_SLOT_BYTES", "4096");
  ScopedEnv force("LOOM_ALGO", "ring");
  runRanks(mode(), 2, [](const RankContext& ctx) {
    checkAllReduce(ctx, {0, 1, 7, 1023, 50001}, kTwoRankDtypes);
    checkReduceScatter(ctx, kTwoRankDtypes);
    checkAllGather(ctx, kTwoRankDtypes);
  });
}

INSTANTIATE_TEST_SUITE_P(Transports, TwoRanksTest,
                         ::testing::Combine(::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                                            ::testing::Values("shm", "tcp")),
                         [](const auto& info) {
                           return modeName(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                         });

INSTANTIATE_TEST_SUITE_P(Hosts, HierarchicalTest, ::testing::Values("2,2", "3,3", "2,2,2", "2,2,2,2", "3,2", "1,3"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (c == ',') c = 'x';
                           return "Hosts" + name;
                         });

INSTANTIATE_TEST_SUITE_P(Ranks, CollectivesTest,
                         ::testing::Combine(::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                                            ::testing::Values(1, 2, 3, 4, 5, 8)),
                         [](const auto& info) {
                           return modeName(std::get<0>(info.param)) + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace loom::test

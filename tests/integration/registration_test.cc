// loomMemAlloc / loomMemFree and loomCommRegister / loomCommDeregister: the
// misuses a framework can make, each answered with a sentence that says what
// was wrong, and the communicator still usable afterwards.
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/handles.h"
#include "support/rank_harness.h"

namespace loom::test {
namespace {

// rc is the call's result; its sentence is read here, after the call ran.
void expectFailure(loomResult_t rc, loomResult_t expected, loomComm_t comm, const std::string& fragment,
                   const std::string& what) {
  const std::string sentence = comm != nullptr ? loomCommGetLastError(comm) : loomGetLastError();
  EXPECT_EQ(rc, expected) << what << ": " << loomGetErrorString(rc) << ": " << sentence;
  EXPECT_NE(sentence.find(fragment), std::string::npos) << what << ": \"" << sentence << "\" lacks \"" << fragment << "\"";
}

// An AllReduce of one int64 still gives the right answer.
void expectUsable(const RankContext& ctx) {
  int64_t value = ctx.rank + 1;
  ASSERT_EQ(loomAllReduce(&value, &value, 1, loomInt64, loomSum, ctx.comm, nullptr, nullptr), loomSuccess)
      << loomCommGetLastError(ctx.comm);
  EXPECT_EQ(value, int64_t{ctx.nranks} * (ctx.nranks + 1) / 2);
}

TEST(MemAlloc, RejectsBadArgumentsWithSentences) {
  void* memory = nullptr;
  expectFailure(loomMemAlloc(nullptr, 64), loomInvalidArgument, nullptr, "ptr is NULL", "NULL ptr");
  expectFailure(loomMemAlloc(&memory, 0), loomInvalidArgument, nullptr, "size is 0", "size 0");
  EXPECT_EQ(memory, nullptr);
  expectFailure(loomMemAlloc(&memory, SIZE_MAX), loomInvalidArgument, nullptr, "too large", "SIZE_MAX");
  int onTheStack = 0;
  expectFailure(loomMemFree(&onTheStack), loomInvalidArgument, nullptr, "not the start of memory from loomMemAlloc",
                "stack pointer");
  EXPECT_EQ(loomMemFree(nullptr), loomSuccess);
}

TEST(MemAlloc, GivesWritablePageAlignedMemoryAndFreesItOnce) {
  void* memory = nullptr;
  ASSERT_EQ(loomMemAlloc(&memory, 10000), loomSuccess) << loomGetLastError();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(memory) % sysconf(_SC_PAGESIZE), 0u);
  auto* bytes = static_cast<unsigned char*>(memory);
  for (int i = 0; i < 10000; ++i) bytes[i] = static_cast<unsigned char>(i);
  for (int i = 0; i < 10000; ++i) ASSERT_EQ(bytes[i], static_cast<unsigned char>(i));
  // Inside the allocation but not its start: refused, not freed.
  expectFailure(loomMemFree(bytes + 8), loomInvalidArgument, nullptr, "not the start", "interior pointer");
  EXPECT_EQ(loomMemFree(memory), loomSuccess) << loomGetLastError();
  expectFailure(loomMemFree(memory), loomInvalidArgument, nullptr, "freed already", "double free");
}

class RegistrationTest : public ::testing::TestWithParam<RankMode> {};

TEST_P(RegistrationTest, RefusesMemoryNotFromLoomMemAlloc) {
  runRanks(GetParam(), 3, [](const RankContext& ctx) {
    std::vector<char> heap(4096);
    void* handle = reinterpret_cast<void*>(1);
    expectFailure(loomCommRegister(ctx.comm, heap.data(), heap.size(), &handle), loomInvalidArgument,
                  ctx.comm, "not all inside one allocation from loomMemAlloc", "heap buffer");
    EXPECT_EQ(handle, nullptr);
    void* memory = nullptr;
    ASSERT_EQ(loomMemAlloc(&memory, 4096), loomSuccess);
    // Running past the allocation's end is refused the same way.
    expectFailure(loomCommRegister(ctx.comm, memory, 8192, &handle), loomInvalidArgument,
                  ctx.comm, "not all inside one allocation", "range past the end");
    expectFailure(loomCommRegister(ctx.comm, memory, 4096, nullptr), loomInvalidArgument,
                  ctx.comm, "handle is NULL", "NULL handle");
    expectFailure(loomCommRegister(ctx.comm, nullptr, 4096, &handle), loomInvalidArgument,
                  ctx.comm, "buff is NULL or size is 0", "NULL buff");
    expectUsable(ctx);
    EXPECT_EQ(loomMemFree(memory), loomSuccess);
  });
}

TEST_P(RegistrationTest, FreeWaitsForDeregistration) {
  runRanks(GetParam(), 3, [](const RankContext& ctx) {
    void* memory = nullptr;
    void* handle = nullptr;
    ASSERT_EQ(loomMemAlloc(&memory, 1 << 20), loomSuccess);
    ASSERT_EQ(loomCommRegister(ctx.comm, memory, 1 << 20, &handle), loomSuccess) << loomCommGetLastError(ctx.comm);
    expectFailure(loomMemFree(memory), loomInvalidUsage, nullptr, "still registered", "free while registered");
    ASSERT_EQ(loomCommDeregister(ctx.comm, handle), loomSuccess) << loomCommGetLastError(ctx.comm);
    EXPECT_EQ(loomMemFree(memory), loomSuccess) << loomGetLastError();
    expectUsable(ctx);
  });
}

TEST_P(RegistrationTest, DeregisteringAnUnknownOrDifferentHandleFailsOnEveryRank) {
  runRanks(GetParam(), 3, [](const RankContext& ctx) {
    void* memory[2] = {};
    void* handle[2] = {};
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(loomMemAlloc(&memory[i], 8192), loomSuccess);
      ASSERT_EQ(loomCommRegister(ctx.comm, memory[i], 8192, &handle[i]), loomSuccess) << loomCommGetLastError(ctx.comm);
    }
    EXPECT_NE(handle[0], handle[1]);
    // Rank 1 passes a made-up handle: every rank fails, naming rank 1.
    void* bogus = ctx.rank == 1 ? reinterpret_cast<void*>(uintptr_t{999}) : handle[0];
    expectFailure(loomCommDeregister(ctx.comm, bogus), loomInvalidArgument, ctx.comm,
                  "rank 1 passed a handle that is not a live registration", "bogus handle");
    // Rank 2 deregisters the other registration: every rank fails.
    void* which = ctx.rank == 2 ? handle[1] : handle[0];
    expectFailure(loomCommDeregister(ctx.comm, which), loomInvalidUsage, ctx.comm,
                  "every rank must deregister the same one", "different handles");
    expectUsable(ctx);
    // Nothing was deregistered by the failures: both still pin their memory.
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(loomMemFree(memory[i]), loomInvalidUsage);
      ASSERT_EQ(loomCommDeregister(ctx.comm, handle[i]), loomSuccess) << loomCommGetLastError(ctx.comm);
      EXPECT_EQ(loomMemFree(memory[i]), loomSuccess) << loomGetLastError();
    }
    EXPECT_EQ(communicatorOf(ctx.comm)->windows().empty(), true);
  });
}

TEST_P(RegistrationTest, DestroyingTheCommunicatorReleasesItsRegistrations) {
  runRanks(GetParam(), 2, [](const RankContext& ctx) {
    void* memory = nullptr;
    void* handle = nullptr;
    ASSERT_EQ(loomMemAlloc(&memory, 1 << 16), loomSuccess);
    ASSERT_EQ(loomCommRegister(ctx.comm, memory, 1 << 16, &handle), loomSuccess) << loomCommGetLastError(ctx.comm);
    EXPECT_EQ(loomMemFree(memory), loomInvalidUsage);
    ASSERT_EQ(loomCommDestroy(ctx.comm), loomSuccess);
    *ctx.commReleased = true;
    EXPECT_EQ(loomMemFree(memory), loomSuccess) << loomGetLastError();
  });
}

// A rank that cannot map a peer's memory (here: one that gave up root, so
// the kernel refuses it root's /proc/<pid>/fd) makes every rank fail with
// the same sentence, and none records the registration.
TEST(RegistrationAcrossUsers, OneRankUnableToMapFailsEveryRank) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root, to run one rank as another user";
  }
  runRanks(RankMode::kProcesses, 3, [](const RankContext& ctx) {
    void* memory = nullptr;
    ASSERT_EQ(loomMemAlloc(&memory, 1 << 16), loomSuccess);
    if (ctx.rank == 1) {
      ASSERT_EQ(setresuid(65534, 65534, 65534), 0);
    }
    void* handle = nullptr;
    expectFailure(loomCommRegister(ctx.comm, memory, 1 << 16, &handle), loomSystemError, ctx.comm,
                  "rank 1 cannot map the buffer of rank 0: cannot open /proc/", "unmappable peer");
    EXPECT_EQ(handle, nullptr);
    EXPECT_TRUE(communicatorOf(ctx.comm)->windows().empty());
    expectUsable(ctx);
    EXPECT_EQ(loomMemFree(memory), loomSuccess) << loomGetLastError();
  });
}

INSTANTIATE_TEST_SUITE_P(Modes, RegistrationTest, ::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                         [](const auto& info) { return modeName(info.param); });

}  // namespace
}  // namespace loom::test

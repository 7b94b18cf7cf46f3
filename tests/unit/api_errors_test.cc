// Bad arguments and bad usage return loomInvalidArgument / loomInvalidUsage
// with a sentence that says what was wrong, and never crash.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <cstring>
#include <future>
#include <string>
#include <thread>

namespace {

// A one-rank communicator: enough to exercise every argument check.
class ApiErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    loomUniqueId id;
    ASSERT_EQ(loomGetUniqueId(&id), loomSuccess) << loomGetLastError();
    ASSERT_EQ(loomCommInitRank(&comm_, 1, id, 0, nullptr), loomSuccess) << loomGetLastError();
  }
  void TearDown() override {
    if (comm_ != nullptr) {
      EXPECT_EQ(loomCommDestroy(comm_), loomSuccess);
    }
  }
  // The call returned `expected` and its sentence mentions `words`.
  void expectError(loomResult_t rc, loomResult_t expected, const std::string& words) {
    EXPECT_EQ(rc, expected) << loomGetErrorString(rc);
    std::string sentence = loomGetLastError();
    EXPECT_NE(sentence.find(words), std::string::npos) << "sentence: " << sentence;
  }
  loomComm_t comm_ = nullptr;
  float data_[4] = {1, 2, 3, 4};
  float out_[4] = {};
};

TEST_F(ApiErrorsTest, NullBuffersWithCountAreRefused) {
  expectError(loomAllReduce(nullptr, out_, 4, loomFloat32, loomSum, comm_, nullptr, nullptr), loomInvalidArgument,
              "loomAllReduce: sendbuf is NULL but 16 bytes");
  expectError(loomAllGather(data_, nullptr, 1, loomFloat32, comm_, nullptr, nullptr), loomInvalidArgument,
              "loomAllGather: recvbuf is NULL");
  expectError(loomSend(nullptr, 3, loomInt8, 0, comm_, nullptr, nullptr), loomInvalidArgument, "loomSend");
  // NULL is fine when nothing goes through it.
  EXPECT_EQ(loomAllReduce(nullptr, nullptr, 0, loomFloat32, loomSum, comm_, nullptr, nullptr), loomSuccess);
}

TEST_F(ApiErrorsTest, UnknownDtypeAndOpAreRefused) {
  expectError(loomAllReduce(data_, out_, 4, static_cast<loomDataType_t>(42), loomSum, comm_, nullptr, nullptr),
              loomInvalidArgument, "dtype 42 is not a loomDataType_t");
  expectError(loomAllReduce(data_, out_, 4, static_cast<loomDataType_t>(-1), loomSum, comm_, nullptr, nullptr),
              loomInvalidArgument, "is not a loomDataType_t");
  expectError(loomReduce(data_, out_, 4, loomFloat32, static_cast<loomRedOp_t>(9), 0, comm_, nullptr, nullptr),
              loomInvalidArgument, "op 9 is not a loomRedOp_t");
}

TEST_F(ApiErrorsTest, RootAndPeerOutOfRangeAreRefused) {
  expectError(loomBroadcast(data_, out_, 4, loomFloat32, 1, comm_, nullptr, nullptr), loomInvalidArgument,
              "root 1 is not a rank of this communicator (0 to 0)");
  expectError(loomReduce(data_, out_, 4, loomFloat32, loomSum, -1, comm_, nullptr, nullptr), loomInvalidArgument,
              "root -1");
  expectError(loomRecv(out_, 4, loomFloat32, 5, comm_, nullptr, nullptr), loomInvalidArgument, "peer 5");
}

TEST_F(ApiErrorsTest, CountOverflowIsRefused) {
  expectError(loomAllReduce(data_, out_, SIZE_MAX / 2, loomFloat64, loomSum, comm_, nullptr, nullptr),
              loomInvalidArgument, "overflows the address space");
  expectError(loomAllGather(data_, out_, SIZE_MAX, loomInt8, comm_, nullptr, nullptr), loomInvalidArgument,
              "overflows");
}

TEST_F(ApiErrorsTest, OverlapThatIsNotInPlaceIsRefused) {
  expectError(loomAllReduce(data_, data_ + 1, 3, loomFloat32, loomSum, comm_, nullptr, nullptr), loomInvalidArgument,
              "overlap but not in the in-place form");
  EXPECT_EQ(loomAllReduce(data_, data_, 4, loomFloat32, loomSum, comm_, nullptr, nullptr), loomSuccess);
}

TEST_F(ApiErrorsTest, GatherScatterAndAllToAllvArgumentsAreChecked) {
  expectError(loomGather(data_, out_, 4, loomFloat32, 1, comm_, nullptr, nullptr), loomInvalidArgument,
              "loomGather: root 1 is not a rank of this communicator");
  expectError(loomGather(data_, nullptr, 4, loomFloat32, 0, comm_, nullptr, nullptr), loomInvalidArgument,
              "loomGather: recvbuf is NULL");
  expectError(loomScatter(nullptr, out_, 4, loomFloat32, 0, comm_, nullptr, nullptr), loomInvalidArgument,
              "loomScatter: sendbuf is NULL");
  expectError(loomScatter(data_, data_ + 1, 2, loomFloat32, 0, comm_, nullptr, nullptr), loomInvalidArgument,
              "loomScatter: sendbuf and recvbuf overlap but not in the in-place form");
  EXPECT_EQ(loomGather(data_, out_, 4, loomFloat32, 0, comm_, nullptr, nullptr), loomSuccess);
  EXPECT_EQ(std::memcmp(data_, out_, sizeof(data_)), 0);
  EXPECT_EQ(loomScatter(data_, data_, 4, loomFloat32, 0, comm_, nullptr, nullptr), loomSuccess) << "in place";

  size_t two[1] = {2}, three[1] = {3}, zero[1] = {0}, huge[1] = {SIZE_MAX - 1};
  expectError(loomAllToAllv(data_, nullptr, zero, out_, two, zero, loomFloat32, comm_, nullptr, nullptr),
              loomInvalidArgument, "loomAllToAllv: sendcounts is NULL");
  expectError(loomAllToAllv(data_, two, zero, out_, three, zero, loomFloat32, comm_, nullptr, nullptr),
              loomInvalidArgument, "loomAllToAllv: rank 0 sends itself 2 elements but receives 3 from itself");
  expectError(loomAllToAllv(data_, two, zero, data_, two, zero, loomFloat32, comm_, nullptr, nullptr),
              loomInvalidArgument, "loomAllToAllv: sendbuf and recvbuf overlap; AllToAllv has no in-place form");
  expectError(loomAllToAllv(data_, two, huge, out_, two, zero, loomFloat32, comm_, nullptr, nullptr),
              loomInvalidArgument, "loomAllToAllv");
  expectError(loomAllToAllv(nullptr, two, zero, out_, two, zero, loomFloat32, comm_, nullptr, nullptr),
              loomInvalidArgument, "loomAllToAllv: sendbuf is NULL");
  EXPECT_EQ(loomAllToAllv(data_, two, two, out_, two, zero, loomFloat32, comm_, nullptr, nullptr), loomSuccess);
  EXPECT_EQ(out_[0], data_[2]);
  EXPECT_EQ(out_[1], data_[3]);
  EXPECT_EQ(loomAllToAllv(nullptr, zero, zero, nullptr, zero, zero, loomFloat32, comm_, nullptr, nullptr), loomSuccess)
      << "nothing to move, no buffers needed";
}

TEST_F(ApiErrorsTest, StreamsAreRefusedUntilDeviceSupport) {
  int fakeStream = 0;
  expectError(loomAllReduce(data_, out_, 4, loomFloat32, loomSum, comm_, &fakeStream, nullptr), loomUnsupported,
              "stream must be NULL");
}

TEST_F(ApiErrorsTest, ErrorSentenceIsKeptOnTheCommunicator) {
  loomAllReduce(nullptr, out_, 4, loomFloat32, loomSum, comm_, nullptr, nullptr);
  EXPECT_NE(std::string(loomCommGetLastError(comm_)).find("sendbuf is NULL"), std::string::npos);
}

TEST_F(ApiErrorsTest, CallsOnADestroyedCommunicatorAreRefused) {
  ASSERT_EQ(loomCommDestroy(comm_), loomSuccess);
  loomComm_t stale = comm_;
  comm_ = nullptr;
  expectError(loomAllReduce(data_, out_, 4, loomFloat32, loomSum, stale, nullptr, nullptr), loomInvalidUsage,
              "destroyed");
  int count = 0;
  expectError(loomCommCount(stale, &count), loomInvalidUsage, "destroyed");
  expectError(loomCommDestroy(stale), loomInvalidUsage, "destroyed");
  EXPECT_NE(std::string(loomCommGetLastError(stale)).find("destroyed"), std::string::npos);
  expectError(loomBarrier(nullptr, nullptr), loomInvalidArgument, "comm is NULL");
}

// Each thread remembers the last handle it found live, so that a training
// loop's calls skip the registry's lock; a destroy must still reach every
// thread's memory, including one that used the handle a moment before.
TEST_F(ApiErrorsTest, HandleUsedJustBeforeItsDestroyIsRefusedOnEveryThread) {
  // Another thread keeps the communicator alive past its destroy (an open
  // group holding one of its operations) and uses the handle before and
  // after: both threads' memories of the handle are warm, and the
  // communicator behind it still exists, yet the handle is dead.
  std::promise<void> destroyed;
  std::promise<loomResult_t> usedBefore;
  loomComm_t handle = comm_;
  loomResult_t otherAfter = loomSuccess, groupEnd = loomInternalError;
  float in[4] = {1, 2, 3, 4}, out[4] = {};
  std::thread other([&] {
    int n = 0;
    loomGroupStart();
    loomResult_t kept = loomAllReduce(in, out, 4, loomFloat32, loomSum, handle, nullptr, nullptr);
    usedBefore.set_value(kept == loomSuccess ? loomCommCount(handle, &n) : kept);
    destroyed.get_future().wait();
    otherAfter = loomCommCount(handle, &n);
    groupEnd = loomGroupEnd();
  });
  ASSERT_EQ(usedBefore.get_future().get(), loomSuccess);
  EXPECT_EQ(loomAllReduce(data_, out_, 4, loomFloat32, loomSum, comm_, nullptr, nullptr), loomSuccess);
  EXPECT_EQ(loomCommDestroy(comm_), loomSuccess);
  comm_ = nullptr;
  int count = 0;
  expectError(loomCommCount(handle, &count), loomInvalidUsage, "destroyed");
  expectError(loomAllReduce(data_, out_, 4, loomFloat32, loomSum, handle, nullptr, nullptr), loomInvalidUsage,
              "destroyed");
  destroyed.set_value();
  other.join();
  EXPECT_EQ(otherAfter, loomInvalidUsage);
  // The group's operation was issued while the handle lived: it still runs.
  EXPECT_EQ(groupEnd, loomSuccess);
  EXPECT_EQ(out[3], 4.0f);
}

TEST_F(ApiErrorsTest, QueriesAndNullOutputs) {
  int count = 0, rank = -1, version = 0;
  EXPECT_EQ(loomCommCount(comm_, &count), loomSuccess);
  EXPECT_EQ(count, 1);
  EXPECT_EQ(loomCommUserRank(comm_, &rank), loomSuccess);
  EXPECT_EQ(rank, 0);
  EXPECT_EQ(loomGetVersion(&version), loomSuccess);
  EXPECT_EQ(version, LOOM_VERSION_CODE);
  expectError(loomCommCount(comm_, nullptr), loomInvalidArgument, "count is NULL");
  expectError(loomGetVersion(nullptr), loomInvalidArgument, "version is NULL");
  expectError(loomWait(nullptr, -1), loomInvalidArgument, "request is NULL");
  expectError(loomRequestFree(nullptr), loomInvalidArgument, "request is NULL");
  loomRequest_t request = nullptr;
  ASSERT_EQ(loomBarrier(comm_, &request), loomSuccess);
  expectError(loomWait(request, -5), loomInvalidArgument, "timeoutMs -5");
  expectError(loomTest(request, nullptr), loomInvalidArgument, "done is NULL");
  EXPECT_EQ(loomWait(request, -1), loomSuccess);
  EXPECT_EQ(loomRequestFree(request), loomSuccess);
  EXPECT_STREQ(loomGetErrorString(loomTimeout), "operation timed out");
  EXPECT_STREQ(loomGetErrorString(static_cast<loomResult_t>(99)), "unknown loomResult_t value");
}

TEST(InitErrorsTest, BadInitArgumentsAreRefused) {
  loomUniqueId id;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess);
  loomComm_t comm = nullptr;
  EXPECT_EQ(loomCommInitRank(&comm, 0, id, 0, nullptr), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError()).find("nranks 0 is not positive"), std::string::npos);
  EXPECT_EQ(loomCommInitRank(&comm, 2, id, 2, nullptr), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError()).find("rank 2 is not a rank"), std::string::npos);
  EXPECT_EQ(loomCommInitRank(nullptr, 1, id, 0, nullptr), loomInvalidArgument);
  EXPECT_EQ(loomGetUniqueId(nullptr), loomInvalidArgument);

  loomUniqueId garbage;
  std::memset(&garbage, 0x5a, sizeof(garbage));
  EXPECT_EQ(loomCommInitRank(&comm, 1, garbage, 0, nullptr), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError()).find("not made by loomGetUniqueId"), std::string::npos);

  loomConfig_t config = LOOM_CONFIG_INITIALIZER;
  config.timeoutMs = -7;
  EXPECT_EQ(loomCommInitRank(&comm, 1, id, 0, &config), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError()).find("timeoutMs is -7"), std::string::npos);
  config = LOOM_CONFIG_INITIALIZER;
  config.size = 3;
  EXPECT_EQ(loomCommInitRank(&comm, 1, id, 0, &config), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError()).find("LOOM_CONFIG_INITIALIZER"), std::string::npos);
  EXPECT_EQ(comm, nullptr);
}

TEST(InitErrorsTest, MalformedEnvironmentVariablesAreNamed) {
  loomUniqueId id;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess);
  loomComm_t comm = nullptr;
  setenv("LOOM_TIMEOUT_MS", "soon", 1);
  EXPECT_EQ(loomCommInitRank(&comm, 1, id, 0, nullptr), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError()).find("LOOM_TIMEOUT_MS='soon' is not an integer"), std::string::npos)
      << loomGetLastError();
  unsetenv("LOOM_TIMEOUT_MS");
  setenv("LOOM_SHM_SLOT_BYTES", "100", 1);
  EXPECT_EQ(loomCommInitRank(&comm, 1, id, 0, nullptr), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError()).find("LOOM_SHM_SLOT_BYTES"), std::string::npos);
  unsetenv("LOOM_SHM_SLOT_BYTES");
  setenv("LOOM_SOCKET_SLOT_BYTES", "100000", 1);
  EXPECT_EQ(loomCommInitRank(&comm, 1, id, 0, nullptr), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError()).find("LOOM_SOCKET_SLOT_BYTES=100000 is not a multiple of 64"),
            std::string::npos)
      << loomGetLastError();
  unsetenv("LOOM_SOCKET_SLOT_BYTES");
  setenv("LOOM_SOCKET_SLOTS", "1", 1);
  EXPECT_EQ(loomCommInitRank(&comm, 1, id, 0, nullptr), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError()).find("LOOM_SOCKET_SLOTS"), std::string::npos) << loomGetLastError();
  unsetenv("LOOM_SOCKET_SLOTS");
  setenv("LOOM_SOCKET_BUFFER_BYTES", "1000", 1);
  EXPECT_EQ(loomCommInitRank(&comm, 1, id, 0, nullptr), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError()).find("LOOM_SOCKET_BUFFER_BYTES=1000 is below 4096"), std::string::npos)
      << loomGetLastError();
  setenv("LOOM_SOCKET_BUFFER_BYTES", "8M", 1);
  EXPECT_EQ(loomCommInitRank(&comm, 1, id, 0, nullptr), loomInvalidArgument);
  EXPECT_NE(std::string(loomGetLastError()).find("LOOM_SOCKET_BUFFER_BYTES"), std::string::npos) << loomGetLastError();
  unsetenv("LOOM_SOCKET_BUFFER_BYTES");
  // Each algorithm setting names itself and what it accepts.
  const struct {
    const char* name;
    const char* value;
    const char* sentence;
  } cases[] = {
      {"LOOM_ALGO", "fast",
       "LOOM_ALGO='fast': 'fast' is not an algorithm; the algorithms are allpairs, ring, tree, halvingdoubling, bruck, "
       "direct, registered, hierarchical, hostleaders"},
      {"LOOM_ALGO", "allgather:tree", "LOOM_ALGO='allgather:tree': AllGather would have no algorithm left"},
      {"LOOM_CMA", "yes", "LOOM_CMA='yes' is not 0 or 1"},
      {"LOOM_MEM_SLOTS", "1", "LOOM_MEM_SLOTS='1' is not an integer between 2 and 1024"},
      {"LOOM_MEM_SLOT_BYTES", "100", "LOOM_MEM_SLOT_BYTES"},
      {"LOOM_MEM_DELAY_US", "-3", "LOOM_MEM_DELAY_US='-3' is not an integer between 0 and 1000000"},
      {"LOOM_MEM_REGIONS", "rdma", "LOOM_MEM_REGIONS='rdma' is not mapped or posted"},
      {"LOOM_TREE_MAX_BYTES", "-5", "LOOM_TREE_MAX_BYTES"},
      {"LOOM_DIRECT_MIN_BYTES", "big", "LOOM_DIRECT_MIN_BYTES='big' is not an integer"},
      {"LOOM_FLIGHT_RECORDER_ENTRIES", "-1", "LOOM_FLIGHT_RECORDER_ENTRIES='-1' is not an integer between 0 and"},
      {"LOOM_DUMP_ON_SIGNAL", "KILL", "LOOM_DUMP_ON_SIGNAL='KILL' is not a signal Loom can take for dumps"},
      {"LOOM_TIMEOUT_MS", "0", "LOOM_TIMEOUT_MS='0' is not an integer between 1 and"},
  };
  for (const auto& c : cases) {
    setenv(c.name, c.value, 1);
    EXPECT_EQ(loomCommInitRank(&comm, 1, id, 0, nullptr), loomInvalidArgument) << c.name;
    EXPECT_NE(std::string(loomGetLastError()).find(c.sentence), std::string::npos) << loomGetLastError();
    unsetenv(c.name);
  }
  EXPECT_EQ(comm, nullptr);
}

}  // namespace

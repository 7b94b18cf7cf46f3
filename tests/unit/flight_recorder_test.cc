#include "core/flight_recorder.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace loom {
namespace {

TEST(FlightRecorderTest, KeepsTheLastEntriesOldestFirst) {
  FlightRecorder recorder(4);
  std::vector<FlightRecorder::Entry*> entries;
  for (uint64_t sequence = 1; sequence <= 6; ++sequence)
    entries.push_back(recorder.posted(sequence, "AllReduce", 100 * sequence, loomFloat32, loomSum, -1, -1));
  FlightRecorder::started(entries[4], 5, false);
  FlightRecorder::ended(entries[4], 5, loomSuccess);
  entries[5]->postedMs.store(12345);  // as if posted long ago: a start at posting takes that time
  FlightRecorder::started(entries[5], 6, true);
  EXPECT_EQ(entries[5]->startedMs.load(), 12345);
  std::vector<std::string> lines = recorder.describe();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].rfind("#3 AllReduce of 300 float32 (sum): queued, posted ", 0), 0u) << lines[0];
  EXPECT_EQ(lines[2].rfind("#5 AllReduce of 500 float32 (sum): done, posted ", 0), 0u) << lines[2];
  EXPECT_NE(lines[2].find(", took "), std::string::npos) << lines[2];
  EXPECT_EQ(lines[3].rfind("#6 AllReduce of 600 float32 (sum): running, posted ", 0), 0u) << lines[3];
  EXPECT_NE(lines[3].find(", running for "), std::string::npos) << lines[3];
  EXPECT_EQ(recorder.operationsSeen(), 6u);
}

// Operation #2's entry went to #6 when the ring wrapped: #2 ending late
// (it was still in flight) must not overwrite what #6 shows.
TEST(FlightRecorderTest, AnOperationWhoseEntryWasTakenOverLeavesItAlone) {
  FlightRecorder recorder(4);
  FlightRecorder::Entry* second = nullptr;
  for (uint64_t sequence = 1; sequence <= 6; ++sequence) {
    FlightRecorder::Entry* entry = recorder.posted(sequence, "Send", 7, loomInt8, -1, -1, 3);
    if (sequence == 2) second = entry;
  }
  FlightRecorder::ended(second, 2, loomRemoteError);
  std::vector<std::string> lines = recorder.describe();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[3].rfind("#6 Send of 7 int8 peer 3: queued", 0), 0u) << lines[3];
}

TEST(FlightRecorderTest, FailedEntriesSayHowAndTheAlgorithmShows) {
  FlightRecorder recorder(2);
  FlightRecorder::Entry* entry = recorder.posted(1, "Broadcast", 9, loomUint8, -1, 2, -1);
  FlightRecorder::started(entry, 1, false);
  entry->algorithm.store("chain");
  FlightRecorder::ended(entry, 1, loomTimeout);
  std::vector<std::string> lines = recorder.describe();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("#1 Broadcast of 9 uint8 root 2 [chain]: failed (operation timed out)", 0), 0u) << lines[0];
}

TEST(FlightRecorderTest, NoEntriesKeepsNothing) {
  FlightRecorder recorder(0);
  EXPECT_EQ(recorder.posted(1, "Barrier", 0, loomUint8, -1, -1, -1), nullptr);
  FlightRecorder::started(nullptr, 1, true);
  FlightRecorder::ended(nullptr, 1, loomSuccess);
  EXPECT_TRUE(recorder.describe().empty());
}

}  // namespace
}  // namespace loom

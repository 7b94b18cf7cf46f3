// LOOM_TUNING_FILE's format (collectives/tuning_file.h): what
// `loom-topo --calibrate` writes reads back as the same constants; a file
// may set only some; anything malformed is refused with the file, the line
// and what is wrong.
#include "collectives/tuning_file.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace loom {
// Named, as the unity build compiles this file with others of the folder.
namespace tuning_file_test {

using A = TunedAlgorithm;

std::string refusal(const std::string& text) {
  try {
    parseTuning(text, "t.tuning");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "'" << text << "' was accepted";
  return {};
}

TEST(TuningFileTest, WhatIsWrittenReadsBackAsTheSameConstants) {
  CostConstants costs = defaultCosts();
  costs.sharedMemory = {3.25, 2676.5, 0.125};
  costs.network = {40, 300, 9};
  costs.socketLink = {1.25, 30000, 0.5};
  costs.stepUs[static_cast<int>(A::kTree)] = 7.75;
  costs.efficiency[static_cast<int>(A::kBruck)] = 1.5;
  costs.switchUs = 2.5;
  costs.memoryBytesPerUs = 12345;
  const std::string text = tuningText(costs, "two lines\nof header");
  EXPECT_EQ(text.rfind("# two lines\n# of header\n", 0), 0u) << text;
  const CostConstants back = parseTuning(text, "t.tuning");
  EXPECT_EQ(back.sharedMemory.latencyUs, 3.25);
  EXPECT_EQ(back.sharedMemory.bytesPerUs, 2676.5);
  EXPECT_EQ(back.sharedMemory.messageUs, 0.125);
  EXPECT_EQ(back.network.latencyUs, 40);
  EXPECT_EQ(back.network.bytesPerUs, 300);
  EXPECT_EQ(back.socketLink.latencyUs, 1.25);
  EXPECT_EQ(back.socketLink.bytesPerUs, 30000);
  EXPECT_EQ(back.socketLink.messageUs, 0.5);
  EXPECT_EQ(back.stepUs[static_cast<int>(A::kTree)], 7.75);
  EXPECT_EQ(back.efficiency[static_cast<int>(A::kBruck)], 1.5);
  EXPECT_EQ(back.switchUs, 2.5);
  EXPECT_EQ(back.memoryBytesPerUs, 12345);
  EXPECT_NE(text.find("\nmemory bytes_per_us 12345\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\ncpu switch_us 2.5\n"), std::string::npos) << text;
  EXPECT_EQ(tuningText(back, ""), tuningText(costs, ""));
  EXPECT_EQ(tuningFingerprint(back), tuningFingerprint(costs));
}

TEST(TuningFileTest, WhatAFileLeavesOutKeepsItsBuiltInValue) {
  const CostConstants costs = parseTuning("# only one\n\n  shm latency_us 9   # a comment\n", "t.tuning");
  EXPECT_EQ(costs.sharedMemory.latencyUs, 9);
  EXPECT_EQ(costs.sharedMemory.bytesPerUs, defaultCosts().sharedMemory.bytesPerUs);
  EXPECT_EQ(costs.network.latencyUs, defaultCosts().network.latencyUs);
  EXPECT_EQ(costs.switchUs, defaultCosts().switchUs);
  // Ranks that share a CPU may switch for nothing.
  EXPECT_EQ(parseTuning("cpu switch_us 0\n", "t.tuning").switchUs, 0);
  EXPECT_EQ(tuningFingerprint(defaultCosts()), "builtin");
  EXPECT_EQ(tuningFingerprint(parseTuning("", "t.tuning")), "builtin");
  EXPECT_NE(tuningFingerprint(costs), "builtin");
  EXPECT_EQ(tuningFingerprint(costs).size(), 16u);
}

TEST(TuningFileTest, MalformedLinesAreRefusedNamingTheFileLineAndWhat) {
  std::string sentence = refusal("shm latency_us 1\nfabric latency_us 2\n");
  EXPECT_NE(sentence.find("t.tuning:2: 'fabric' is not a link class, the CPUs, the memory or an algorithm"),
            std::string::npos)
      << sentence;
  EXPECT_NE(sentence.find("shm, network, socket, cpu, memory, ring, tree, halvingdoubling, bruck, allpairs"),
            std::string::npos)
      << sentence;
  EXPECT_NE(
      refusal("memory latency_us 1\n").find("t.tuning:1: memory has no 'latency_us'; the memory has bytes_per_us"),
      std::string::npos);
  EXPECT_NE(refusal("memory bytes_per_us 0\n").find("bytes_per_us must be a positive number"), std::string::npos);
  sentence = refusal("cpu latency_us 1\n");
  EXPECT_NE(sentence.find("t.tuning:1: cpu has no 'latency_us'; the CPUs have switch_us"), std::string::npos)
      << sentence;
  EXPECT_NE(refusal("cpu switch_us -2\n").find("switch_us must be a number from 0 up"), std::string::npos);
  sentence = refusal("shm latency 1\n");
  EXPECT_NE(sentence.find("t.tuning:1: shm has no 'latency'; a link has latency_us, bytes_per_us and message_us"),
            std::string::npos)
      << sentence;
  sentence = refusal("tree latency_us 1\n");
  EXPECT_NE(sentence.find("tree has no 'latency_us'; an algorithm has step_us and efficiency"), std::string::npos)
      << sentence;
  EXPECT_NE(refusal("shm latency_us\n").find("t.tuning:1: 'shm latency_us' is not 'SCOPE KEY VALUE'"),
            std::string::npos);
  EXPECT_NE(refusal("shm latency_us 1 2\n").find("'2' follows the value"), std::string::npos);
  EXPECT_NE(refusal("shm latency_us fast\n").find("'fast' is not a number"), std::string::npos);
  EXPECT_NE(refusal("shm latency_us 1e999\n").find("'1e999' is not a number"), std::string::npos);
  EXPECT_NE(refusal("shm latency_us 1.5x\n").find("'1.5x' is not a number"), std::string::npos);
  EXPECT_NE(refusal("shm latency_us -1\n").find("latency_us must be a number from 0 up"), std::string::npos);
  EXPECT_NE(refusal("shm latency_us nan\n").find("latency_us must be a number from 0 up"), std::string::npos);
  EXPECT_NE(refusal("network bytes_per_us 0\n").find("bytes_per_us must be a positive number"), std::string::npos);
  EXPECT_NE(refusal("ring efficiency 0\n").find("efficiency must be above 0 and at most 100"), std::string::npos);
  EXPECT_NE(refusal("ring efficiency 101\n").find("efficiency must be above 0 and at most 100"), std::string::npos);
  // Algorithms the model does not weigh have no constants.
  EXPECT_NE(refusal("hostleaders step_us 1\n").find("'hostleaders' is not a link class"), std::string::npos);
  EXPECT_NE(refusal("direct speed 1\n").find("direct has no 'speed'"), std::string::npos);
}

// A file --calibrate wrote without the switch was fitted as its ranks took
// turns on the CPUs; the model would count the turns again.
TEST(TuningFileTest, ACalibratedFileWithoutTheSwitchIsRefused) {
  const std::string header = "# Loom cost constants\n# Measured by loom-topo --calibrate on vm, 2026-12-06.\n";
  EXPECT_NE(refusal(header + "shm latency_us 3.5\nshm bytes_per_us 2270\n")
                .find("t.tuning: measured by a loom-topo --calibrate that fitted shared memory as its ranks shared "
                      "the CPUs, and has no 'cpu switch_us': run loom-topo --calibrate again"),
            std::string::npos);
  EXPECT_EQ(parseTuning(header + "shm latency_us 3.5\ncpu switch_us 1\n", "t.tuning").switchUs, 1);
  // What --calibrate writes reads back; a file written by hand needs no switch.
  EXPECT_EQ(parseTuning(tuningText(defaultCosts(), "Measured by loom-topo --calibrate on vm"), "t.tuning").switchUs,
            defaultCosts().switchUs);
  EXPECT_EQ(parseTuning("shm latency_us 3.5\n", "t.tuning").sharedMemory.latencyUs, 3.5);
}

TEST(TuningFileTest, AFileThatCannotBeReadIsSaidSo) {
  try {
    readTuningFile("/nonexistent/loom.tuning");
    ADD_FAILURE() << "read a file that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("LOOM_TUNING_FILE=/nonexistent/loom.tuning cannot be read: No such file"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace tuning_file_test
}  // namespace loom

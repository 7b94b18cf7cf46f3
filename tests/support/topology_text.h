// Topology files written from a test's own text, for the tests of the
// topology readers: one place for temp paths, loading and the error check.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>

#include "base/error.h"
#include "topology/topology_file.h"

namespace loom::topo {

// Temp files carry the pid: ctest runs test cases of one binary in parallel.
inline std::string tempPrefix() { return testing::TempDir() + "loom_" + std::to_string(getpid()) + "_"; }

inline std::string tempPath(const std::string& name) { return tempPrefix() + name; }

inline std::string writeTemp(const std::string& name, const std::string& text) {
  std::string path = tempPath(name);
  std::ofstream(path) << text;
  return path;
}

inline std::unique_ptr<Topology> loadText(const std::string& name, const std::string& text) {
  return readTopologyFile(writeTemp(name, text), nullptr);
}

// The sentence a malformed file is refused with; it must be loomInvalidArgument
// and start with the file's path, so the user knows where to look.
inline std::string errorOf(const std::string& name, const std::string& text) {
  std::string path = writeTemp(name, text);
  try {
    readTopologyFile(path, nullptr);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomInvalidArgument);
    std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ":", 0), 0u) << "message does not start with the file: " << message;
    return message;
  }
  ADD_FAILURE() << name << " was accepted";
  return "";
}

// One <cpu> around `body`, so each test shows only what it is about.
inline std::string oneCpu(const std::string& body) {
  return "<system version=\"1\">\n  <cpu numaid=\"0\" affinity=\"0000000f\">\n" + body + "  </cpu>\n</system>\n";
}

}  // namespace loom::topo

// -J FILE: nccl-tests' JSON report (its src/util.cu, "version": 3), written
// by rank 0. As nccl-tests: only for a name ending in .json, never over an
// existing file (FILE.0, FILE.1, ... instead), and the same keys in the same
// order, booleans as the strings "true"/"false", root as a padded string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace loom::perf {

struct JsonDevice {
  int rank, pid, device;
  std::string hostname, deviceHex, deviceInfo;
};

struct JsonHalf {
  double time, algBw, busBw;
  bool checked;
  double wrong;
};

class JsonReport {
 public:
  // Opens the file (stdout says where, or why not); no-op unless .json.
  JsonReport(const std::string& path, int argc, char** argv, int libraryVersion);
  ~JsonReport();
  bool active() const { return out_ != nullptr; }

  void config(const std::vector<std::pair<std::string, std::string>>& fields, const std::vector<JsonDevice>& devices);
  void result(size_t bytes, size_t count, const char* type, const char* op, int root, const JsonHalf halves[2],
              bool cpuTime, int iterations);
  void finish(int outOfBounds, double avgBusBw, double minBusBw, const std::string& lastError);

 private:
  std::string body_;
  std::vector<std::string> results_;
  FILE* out_ = nullptr;
};

// JSON text for a string, escaped; for a double, as nccl-tests ("%lf", or "nan").
std::string jsonString(const std::string& text);
std::string jsonNumber(double value);

}  // namespace loom::perf

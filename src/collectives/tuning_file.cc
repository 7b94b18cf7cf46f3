#include "collectives/tuning_file.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace loom {
namespace {

struct LinkScope {
  const char* name;
  LinkCosts CostConstants::*link;
};
const LinkScope kLinks[] = {{"shm", &CostConstants::sharedMemory},
                            {"network", &CostConstants::network},
                            {"socket", &CostConstants::socketLink}};

// Scopes of one constant each: the CPUs ranks share, and a host's memory.
struct SingleScope {
  const char* name;
  const char* key;
  double CostConstants::*field;
  const char* what;  // for the sentence naming the key
};
const SingleScope kSingles[] = {
    {"cpu", "switch_us", &CostConstants::switchUs, "the CPUs have switch_us (a step's wait per further rank on a CPU)"},
    {"memory", "bytes_per_us", &CostConstants::memoryBytesPerUs,
     "the memory has bytes_per_us (what a host copies for all its ranks at once)"}};

// The algorithms whose constants the model uses.
const TunedAlgorithm kModelled[] = {TunedAlgorithm::kRing,  TunedAlgorithm::kTree,     TunedAlgorithm::kHalvingDoubling,
                                    TunedAlgorithm::kBruck, TunedAlgorithm::kAllPairs, TunedAlgorithm::kRegistered,
                                    TunedAlgorithm::kDirect};

double* linkField(LinkCosts& link, const std::string& key) {
  if (key == "latency_us") return &link.latencyUs;
  if (key == "bytes_per_us") return &link.bytesPerUs;
  if (key == "message_us") return &link.messageUs;
  return nullptr;
}

double* algorithmField(CostConstants& costs, TunedAlgorithm algorithm, const std::string& key) {
  const int a = static_cast<int>(algorithm);
  if (key == "step_us") return &costs.stepUs[a];
  if (key == "efficiency") return &costs.efficiency[a];
  return nullptr;
}

std::string scopes() {
  std::string text;
  for (const LinkScope& link : kLinks) text += std::string(text.empty() ? "" : ", ") + link.name;
  for (const SingleScope& single : kSingles) text += std::string(", ") + single.name;
  for (TunedAlgorithm algorithm : kModelled) text += std::string(", ") + algorithmName(algorithm);
  return text;
}

// Bandwidths and efficiencies divide: they must be positive. Latencies and
// per-step costs may be zero. Nothing may be infinite or absurd (a day).
void checkValue(double value, const std::string& key, const std::string& at) {
  const bool divides = key == "bytes_per_us" || key == "efficiency";
  if (!std::isfinite(value) || value < 0 || (divides && value <= 0) || value > 86400e6 ||
      (key == "efficiency" && value > 100))
    fail(loomInvalidArgument, at + ": " + key + " must be " +
                                  (key == "efficiency" ? std::string("above 0 and at most 100")
                                   : divides           ? std::string("a positive number")
                                                       : std::string("a number from 0 up")) +
                                  ", not " + std::to_string(value));
}

}  // namespace

CostConstants parseTuning(const std::string& text, const std::string& where) {
  CostConstants costs = defaultCosts();
  std::istringstream in(text);
  std::string line;
  // --calibrate fits shared memory per CPU and writes the switch with it; a
  // file it wrote without the switch holds constants fitted as its ranks
  // shared the CPUs, which the model would count twice.
  bool calibrated = false, switchGiven = false;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::string at = where + ":" + std::to_string(number);
    const size_t hash = line.find('#');
    if (hash != std::string::npos) {
      calibrated = calibrated || line.find("Measured by loom-topo --calibrate on ", hash) != std::string::npos;
      line.resize(hash);
    }
    std::istringstream words(line);
    std::string scope, key, value, extra;
    if (!(words >> scope)) continue;  // blank or comment
    if (!(words >> key >> value))
      fail(loomInvalidArgument, at + ": '" + line + "' is not 'SCOPE KEY VALUE' (for example 'shm latency_us 0.5')");
    if (words >> extra) fail(loomInvalidArgument, at + ": '" + extra + "' follows the value; one constant per line");
    double* field = nullptr;
    for (const LinkScope& link : kLinks)
      if (scope == link.name) {
        field = linkField(costs.*link.link, key);
        if (field == nullptr)
          fail(loomInvalidArgument,
               at + ": " + scope + " has no '" + key + "'; a link has latency_us, bytes_per_us and message_us");
      }
    for (const SingleScope& single : kSingles)
      if (scope == single.name) {
        if (key != single.key) fail(loomInvalidArgument, at + ": " + scope + " has no '" + key + "'; " + single.what);
        field = &(costs.*single.field);
      }
    for (TunedAlgorithm algorithm : kModelled)
      if (scope == algorithmName(algorithm)) {
        field = algorithmField(costs, algorithm, key);
        if (field == nullptr)
          fail(loomInvalidArgument,
               at + ": " + scope + " has no '" + key + "'; an algorithm has step_us and efficiency");
      }
    if (field == nullptr)
      fail(loomInvalidArgument,
           at + ": '" + scope + "' is not a link class, the CPUs, the memory or an algorithm the cost model weighs (" +
               scopes() + ")");
    errno = 0;
    char* end = nullptr;
    const double parsed = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0' || errno == ERANGE)
      fail(loomInvalidArgument, at + ": '" + value + "' is not a number");
    checkValue(parsed, key, at);
    *field = parsed;
    switchGiven = switchGiven || field == &costs.switchUs;
  }
  if (calibrated && !switchGiven)
    fail(loomInvalidArgument, where +
                                  ": measured by a loom-topo --calibrate that fitted shared memory as its ranks "
                                  "shared the CPUs, and has no 'cpu switch_us': run loom-topo --calibrate again");
  return costs;
}

CostConstants readTuningFile(const std::string& path) {
  std::ifstream file(path);
  if (!file)
    fail(loomInvalidArgument, "LOOM_TUNING_FILE=" + path + " cannot be read: " + std::strerror(errno) +
                                  " (loom-topo --calibrate writes one)");
  std::ostringstream text;
  text << file.rdbuf();
  if (text.str().size() > (1 << 20))
    fail(loomInvalidArgument, "LOOM_TUNING_FILE=" + path + " is over 1 MiB: not a tuning file");
  return parseTuning(text.str(), path);
}

std::string tuningText(const CostConstants& costs, const std::string& header) {
  std::string text;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);) text += "# " + line + "\n";
  char value[64];
  for (const LinkScope& link : kLinks) {
    const LinkCosts& l = costs.*link.link;
    for (auto [key, v] :
         {std::pair{"latency_us", l.latencyUs}, {"bytes_per_us", l.bytesPerUs}, {"message_us", l.messageUs}}) {
      std::snprintf(value, sizeof(value), "%.6g", v);
      text += std::string(link.name) + " " + key + " " + value + "\n";
    }
  }
  for (const SingleScope& single : kSingles) {
    std::snprintf(value, sizeof(value), "%.6g", costs.*single.field);
    text += std::string(single.name) + " " + single.key + " " + value + "\n";
  }
  for (TunedAlgorithm algorithm : kModelled) {
    const int a = static_cast<int>(algorithm);
    for (auto [key, v] : {std::pair{"step_us", costs.stepUs[a]}, {"efficiency", costs.efficiency[a]}}) {
      std::snprintf(value, sizeof(value), "%.6g", v);
      text += std::string(algorithmName(algorithm)) + " " + key + " " + value + "\n";
    }
  }
  return text;
}

std::string tuningFingerprint(const CostConstants& costs) {
  const std::string text = tuningText(costs, "");
  if (text == tuningText(defaultCosts(), "")) return "builtin";
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  char out[24];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(hash));
  return out;
}

}  // namespace loom

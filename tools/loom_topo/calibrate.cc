#include "loom_topo/calibrate.h"

#include <loom/loom.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <set>
#include <vector>

#include "base/error.h"
#include "collectives/algorithm_table.h"
#include "collectives/tuning_file.h"
#include "loom_topo/numa_measure.h"
#include "loom_topo/report.h"
#include "transport/registry.h"

namespace loom::topo {
namespace {

using C = TunedCollective;
using A = TunedAlgorithm;

// What one communicator measures: LOOM_ALGO leaves each collective one
// algorithm, which then runs at every size.
// The latency point, then the bandwidth points: where the schedules'
// crossovers fall on machines of a few to a few dozen ranks. All-pairs runs
// within a slot only, and competes where calls are small.
constexpr int kSizeCount = 5;
using Sizes = size_t[kSizeCount];
const Sizes kSizes = {8, size_t{64} << 10, size_t{256} << 10, size_t{1} << 20, size_t{4} << 20};
const Sizes kSmallSizes = {8, size_t{1} << 10, size_t{4} << 10, size_t{16} << 10, size_t{32} << 10};

struct Setting {
  const char* algo;
  A allReduce;
  A allGather;  // kCount: AllGather not measured
  const Sizes& sizes;
  bool registered = false;  // buffers from loomMemAlloc, registered
  // Cross-memory attach (LOOM_CMA=1): where the ranks may not read each
  // other's memory (ptrace rules), every rank's init refuses alike and the
  // row keeps its constants.
  bool crossMemoryAttach = false;
};
const Setting kSettings[] = {
    {"allreduce:ring;allgather:ring", A::kRing, A::kRing, kSizes},
    {"allreduce:tree;allgather:bruck", A::kTree, A::kBruck, kSizes},
    {"allreduce:halvingdoubling", A::kHalvingDoubling, A::kCount, kSizes},
    {"allreduce:allpairs", A::kAllPairs, A::kCount, kSmallSizes},
    {"allreduce:registered", A::kRegistered, A::kCount, kSizes, true},
    {"allreduce:direct", A::kDirect, A::kCount, kSizes, false, true},
};
constexpr int kSettingCount = sizeof(kSettings) / sizeof(kSettings[0]);

// One line per measurement from rank 0 to the parent: setting, collective
// (0 AllReduce, 1 AllGather), size index, microseconds per call.
struct Sample {
  int setting, collective, size;
  double us;
};

// Registered buffers for the single-copy setting: from loomMemAlloc,
// registered with the communicator, released with it.
class RegisteredBuffers {
 public:
  RegisteredBuffers(loomComm_t comm, size_t bytes) : comm_(comm) {
    for (int i = 0; i < 2; ++i) {
      if (loomMemAlloc(&buffers_[i], bytes) != loomSuccess ||
          loomCommRegister(comm, buffers_[i], bytes, &handles_[i]) != loomSuccess) {
        std::fprintf(stderr, "loom-topo --calibrate: registering buffers: %s\n", loomGetLastError());
        std::_Exit(3);
      }
      std::memset(buffers_[i], 0, bytes);
    }
  }
  ~RegisteredBuffers() {
    for (int i = 0; i < 2; ++i) {
      loomCommDeregister(comm_, handles_[i]);
      loomMemFree(buffers_[i]);
    }
  }
  void* send() const { return buffers_[0]; }
  void* recv() const { return buffers_[1]; }

 private:
  loomComm_t comm_;
  void* buffers_[2] = {};
  void* handles_[2] = {};
};

// Runs the first `settings` of kSettings.
[[noreturn]] void runRank(int rank, int ranks, const std::vector<loomUniqueId>& ids, int settings, int reportFd) {
  std::vector<float> send(kSizes[kSizeCount - 1] / sizeof(float) + 1, 1.0f), recv(send.size() * 2);  // the largest
  for (int s = 0; s < settings; ++s) {
    setenv("LOOM_ALGO", kSettings[s].algo, 1);
    if (kSettings[s].crossMemoryAttach) setenv("LOOM_CMA", "1", 1);
    loomComm_t comm = nullptr;
    loomConfig_t config = LOOM_CONFIG_INITIALIZER;
    config.timeoutMs = 120000;
    const loomResult_t rc = loomCommInitRank(&comm, ranks, ids[s], rank, &config);
    unsetenv("LOOM_CMA");
    if (rc == loomUnsupported && kSettings[s].crossMemoryAttach) {
      if (rank == 0)
        std::fprintf(stderr, "loom-topo --calibrate: not timing cross-memory attach: %s\n", loomGetLastError());
      continue;
    }
    if (rc != loomSuccess) {
      std::fprintf(stderr, "loom-topo --calibrate: rank %d: %s\n", rank, loomGetLastError());
      std::_Exit(3);
    }
    {
      std::unique_ptr<RegisteredBuffers> registered;
      void* in = send.data();
      void* out = recv.data();
      if (kSettings[s].registered) {
        registered = std::make_unique<RegisteredBuffers>(comm, recv.size() * sizeof(float));
        in = registered->send();
        out = registered->recv();
      }
      for (int collective = 0; collective < 2; ++collective) {
        if (collective == 1 && kSettings[s].allGather == A::kCount) continue;
        for (int size = 0; size < kSizeCount; ++size) {
          const double us = timeCalls(comm, collective, kSettings[s].sizes[size], ranks, in, out);
          if (rank == 0) {
            const Sample sample{s, collective, size, us};
            if (write(reportFd, &sample, sizeof(sample)) != sizeof(sample)) std::_Exit(4);
          }
        }
      }
    }
    loomCommDestroy(comm);
  }
  std::_Exit(0);
}

// Microseconds per call of each setting, collective and size.
struct Measured {
  double us[kSettingCount][2][kSizeCount] = {};
};

// The first `settings` of kSettings on `ranks` forked ranks of this host.
Measured measure(int ranks, int settings) {
  std::vector<loomUniqueId> ids(static_cast<size_t>(settings));
  for (loomUniqueId& id : ids)
    if (loomGetUniqueId(&id) != loomSuccess)
      fail(loomSystemError, std::string("cannot start a rendezvous: ") + loomGetLastError());
  int pipeFds[2];
  if (pipe(pipeFds) != 0) fail(loomSystemError, std::string("pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  std::vector<pid_t> children;
  for (int rank = 0; rank < ranks; ++rank) {
    const pid_t pid = fork();
    if (pid < 0) fail(loomSystemError, std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      close(pipeFds[0]);
      runRank(rank, ranks, ids, settings, pipeFds[1]);
    }
    children.push_back(pid);
  }
  close(pipeFds[1]);
  Measured measured;
  for (Sample sample; read(pipeFds[0], &sample, sizeof(sample)) == sizeof(sample);)
    if (sample.setting >= 0 && sample.setting < settings && sample.collective >= 0 && sample.collective < 2 &&
        sample.size >= 0 && sample.size < kSizeCount)
      measured.us[sample.setting][sample.collective][sample.size] = sample.us;
  close(pipeFds[0]);
  bool failed = false;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  if (failed) fail(loomSystemError, "a calibration rank failed (its sentence is above)");
  return measured;
}

// What it times is shared memory between local ranks: a LOOM_TRANSPORTS
// that connects them otherwise would fit its constants (and the registered
// row, which needs shared memory) to another transport.
void requireSharedMemory(int ranks) {
  const char* setting = std::getenv("LOOM_TRANSPORTS");
  const std::string text = setting != nullptr ? setting : "";
  const std::vector<int> chosen =
      chooseTransports(simulatedIdentities({ranks}), 0, parseTransportFilter(text, "LOOM_TRANSPORTS"));
  const std::string kind = transportKinds()[static_cast<size_t>(chosen[1])].name;
  if (kind != "shm")
    fail(loomInvalidArgument, "--calibrate times shared memory between local ranks, but LOOM_TRANSPORTS='" + text +
                                  "' connects them over " + kind + ": unset it, or let it include shm");
}

// A step of the ring AllReduce at 8 B on `ranks`.
double ringStepUs(const Measured& measured, int ranks) {
  return measured.us[0][0][0] / trafficOf(C::kAllReduce, A::kRing, ranks, 8).steps;
}

}  // namespace

std::string shortNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", v);
  return text;
}

double timeCalls(loomComm_t comm, int collective, size_t bytes, int ranks, void* send, void* recv) {
  const size_t count = std::max<size_t>(1, bytes / sizeof(float) / (collective == 1 ? ranks : 1));
  auto call = [&] {
    const loomResult_t rc = collective == 0
                                ? loomAllReduce(send, recv, count, loomFloat32, loomSum, comm, nullptr, nullptr)
                                : loomAllGather(send, recv, count, loomFloat32, comm, nullptr, nullptr);
    if (rc != loomSuccess) {
      std::fprintf(stderr, "loom-topo: calibrating: %s\n", loomGetLastError());
      std::_Exit(3);
    }
  };
  // About 50 ms per repetition, at least 5 calls; the fastest of 3 (another
  // process's work only ever adds time).
  for (int i = 0; i < 3; ++i) call();
  loomBarrier(comm, nullptr);
  const auto start = std::chrono::steady_clock::now();
  call();
  const double once = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  int calls = std::clamp(static_cast<int>(50000 / std::max(once, 1.0)), 5, 20000);
  // Every rank must run as many calls: rank 0's count goes to all.
  int shared = calls;
  loomBroadcast(&shared, &shared, 1, loomInt32, 0, comm, nullptr, nullptr);
  calls = shared;
  double times[3];
  for (double& t : times) {
    loomBarrier(comm, nullptr);
    const auto begin = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - begin).count() / calls;
  }
  return *std::min_element(times, times + 3);
}

// time = steps x latency + bytes x slope: the slope that fits the large
// sizes best in relative error, with the latency term fixed.
double fitSlope(const std::vector<double>& bytes, const std::vector<double>& us, double fixedUs) {
  double num = 0, den = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    num += (us[i] - fixedUs) * bytes[i] / (us[i] * us[i]);
    den += bytes[i] * bytes[i] / (us[i] * us[i]);
  }
  return num / den;
}

void writeTuning(std::ostream& report, const CostConstants& costs, const std::string& header,
                 const std::string& outPath) {
  const std::string text = tuningText(costs, header);
  std::ofstream out(outPath);
  if (!out || !(out << text) || !out.flush())
    fail(loomSystemError, "cannot write " + outPath + ": " + std::strerror(errno));
  report << "fitted:\n" << text << "written to " << outPath << " (use it: LOOM_TUNING_FILE=" << outPath << ")\n";
}

CostConstants costsToUpdate(const std::string& path) {
  std::ifstream existing(path);
  if (!existing) return defaultCosts();
  try {
    return readTuningFile(path);
  } catch (const Error& e) {
    fail(loomInvalidArgument,
         std::string(e.what()) + "; " + path + " is not a tuning file to update: remove it or name another file");
  }
}

void calibrate(std::ostream& report, const Topology& t, int ranks, const std::string& outPath) {
  if (ranks < 2) fail(loomInvalidArgument, "--calibrate needs at least 2 ranks");
  // The network's constants (--calibrate-network's) stay as the file has
  // them; a file that is no tuning file is refused before measuring.
  CostConstants costs = costsToUpdate(outPath);
  requireSharedMemory(ranks);
  const bool networkBuiltIn = std::memcmp(&costs.network, &defaultCosts().network, sizeof(LinkCosts)) == 0;
  // What the ranks measure must be the built-in algorithms, not a file's
  // choice, over the transports' plain copies (the direct row sets
  // LOOM_CMA=1 for itself).
  unsetenv("LOOM_TUNING_FILE");
  unsetenv("LOOM_CMA");
  // More ranks than CPUs run in turns (cost_model.h): what a rank streams
  // and a step's own costs are fitted as they run, then given per CPU.
  const std::set<int> allowed = detail::allowedCpus();  // also every rank's: they are forked
  const std::vector<int> cpuList(allowed.begin(), allowed.end());
  const int cpus = std::max(1, static_cast<int>(cpuList.size()));
  const double turns = std::max(1.0, static_cast<double>(ranks) / cpus);
  Measured measured = measure(ranks, kSettingCount);
  const auto& us = measured.us;
  report << "measured on " << ranks << " ranks of this host's " << cpus
         << " CPUs, microseconds per call (fastest of 3):\n";
  // The ring AllReduce gives the link: latency from 8 B, bandwidth from the rest.
  LinkCosts& shm = costs.sharedMemory;
  double latencyUs = 0;  // a ring step as it runs: with the switches
  auto fitAlgorithm = [&](int setting, int collective, A algorithm) {
    const C c = collective == 0 ? C::kAllReduce : C::kAllGather;
    const Traffic latency = trafficOf(c, algorithm, ranks, 8);
    const double steps = latency.steps;
    // Its further messages (all-pairs') cost the built-in messageUs each.
    const double messagesUs = latency.messages * shm.messageUs * turns;
    std::string line = std::string("  ") + collectiveName(c) + " " + algorithmName(algorithm) + ":";
    for (int size = 0; size < kSizeCount; ++size) line.append(" ").append(shortNumber(us[setting][collective][size]));
    report << line << "\n";
    const double stepUs = std::max(0.0, (us[setting][collective][0] - messagesUs) / steps - latencyUs);
    std::vector<double> bytes, times;
    for (int size = 1; size < kSizeCount; ++size) {
      bytes.push_back(trafficOf(c, algorithm, ranks, static_cast<double>(kSettings[setting].sizes[size])).bytes);
      times.push_back(us[setting][collective][size]);
    }
    const double slope = fitSlope(bytes, times, steps * (latencyUs + stepUs) + messagesUs);
    return std::pair{stepUs / turns, slope};
  };
  // The ring's slope is the link's bandwidth. Another process's burst can
  // stall the 8 B calls past the larger ones' times: then the fit has no
  // slope, and the ranks measure again, a bounded number of times.
  double ringSlope = 0;
  for (int attempt = 1;; ++attempt) {
    latencyUs = ringStepUs(measured, ranks);
    ringSlope = fitAlgorithm(0, 0, A::kRing).second;
    if (ringSlope > 0) break;
    if (attempt == kCalibrationAttempts)
      fail(loomSystemError, "the ring's time did not grow with its size in " + std::to_string(attempt) +
                                " measurements: the machine was too busy to measure; run it again");
    report << "  the ring's time did not grow with its size: the machine was busy; measuring again\n";
    measured = measure(ranks, kSettingCount);
  }
  shm.bytesPerUs = turns / ringSlope;
  // The switches: a step's time against the ring's on a CPU per rank. On
  // one CPU no two ranks run apart: the step alone keeps its value and the
  // rest of the measured step is the switches.
  if (turns > 1 && cpus >= 2) {
    const double aloneUs = ringStepUs(measure(cpus, 1), cpus);
    report << "  AllReduce ring on " << cpus << " ranks: " << shortNumber(aloneUs) << " us per step\n";
    costs.switchUs = std::max(0.0, (latencyUs - aloneUs) / (turns - 1));
    shm.latencyUs = std::max(0.0, latencyUs - (turns - 1) * costs.switchUs);
  } else if (turns > 1) {
    costs.switchUs = std::max(0.0, (latencyUs - shm.latencyUs) / (turns - 1));
  } else {
    shm.latencyUs = latencyUs;
  }
  // The memory: every CPU copying at once, out of cache (buffers of at most
  // 256 MiB in all). A byte a rank sends is copied twice, into a slot and
  // out of it, so in the model's bytes the memory moves half what it
  // copies; and the ring's ranks moved at least as much together.
  if (!cpuList.empty()) {
    const size_t bufferBytes = std::clamp<size_t>((size_t{128} << 20) / cpuList.size(), 1 << 20, 16 << 20);
    const double copiedBytesPerUs = detail::measureCopyBytesPerUs(cpuList, bufferBytes);
    report << "  memory: " << cpus << " CPUs copying at once: " << shortNumber(copiedBytesPerUs)
           << " bytes/us together\n";
    costs.memoryBytesPerUs = copiedBytesPerUs / 2;
  }
  costs.memoryBytesPerUs = std::max(costs.memoryBytesPerUs, ranks / ringSlope);
  calibrateSockets(report, t, cpuList, costs);
  auto setAlgorithm = [&](A algorithm, std::pair<double, double> fit) {
    const int a = static_cast<int>(algorithm);
    costs.stepUs[a] = fit.first;
    costs.efficiency[a] = std::clamp(ringSlope / std::max(fit.second, 1e-12), 0.01, 100.0);
  };
  costs.stepUs[static_cast<int>(A::kRing)] = 0;
  costs.efficiency[static_cast<int>(A::kRing)] = 1;
  setAlgorithm(A::kTree, fitAlgorithm(1, 0, A::kTree));
  setAlgorithm(A::kHalvingDoubling, fitAlgorithm(2, 0, A::kHalvingDoubling));
  fitAlgorithm(0, 1, A::kRing);  // AllGather's ring: reported, the link is the AllReduce's
  setAlgorithm(A::kBruck, fitAlgorithm(1, 1, A::kBruck));
  setAlgorithm(A::kAllPairs, fitAlgorithm(3, 0, A::kAllPairs));
  setAlgorithm(A::kRegistered, fitAlgorithm(4, 0, A::kRegistered));
  if (us[5][0][0] > 0)
    setAlgorithm(A::kDirect, fitAlgorithm(5, 0, A::kDirect));
  else
    report << "  AllReduce direct: not timed (the sentence above says why); its constants stay as they were\n";

  char host[256] = "this host";
  gethostname(host, sizeof(host) - 1);
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  const std::string header =
      "Loom cost constants (docs/ENGINE.md, \"Algorithm choice\"), for LOOM_TUNING_FILE.\n"
      "Measured by loom-topo --calibrate on " +
      std::string(host) + ", " + date + ", " + std::to_string(ranks) + " ranks of one host. network: " +
      (networkBuiltIn ? std::string("built in, a job's bandwidth its links' rate (loom-topo --calibrate-network "
                                    "measures it)")
                      : std::string("as the file had it (loom-topo --calibrate-network)")) +
      ".";
  writeTuning(report, costs, header, outPath);
}

}  // namespace loom::topo

// loom-topo --calibrate-network: the cost model's network constants,
// measured between hosts by the ring AllReduce among one rank per host.
#include <loom/loom.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "base/error.h"
#include "collectives/tuning_file.h"
#include "core/config.h"
#include "loom_topo/calibrate.h"

namespace loom::topo {
namespace {

// The latency point, then the bandwidth points (as --calibrate's).
const size_t kNetworkSizes[] = {8, size_t{64} << 10, size_t{256} << 10, size_t{1} << 20, size_t{4} << 20};

// The launcher's rank and place on its host (core/config.h reads them as
// loomCommInitFromEnv does).
LaunchEnvironment launchOf() {
  bool launched = false;
  for (const char* name : {"RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "PMI_RANK"})
    launched = launched || std::getenv(name) != nullptr;
  if (!launched)
    fail(loomInvalidArgument,
         "--calibrate-network runs as every rank of a job across hosts: launch it with loomrun (or mpirun, srun, "
         "torchrun) on at least two hosts, e.g. loomrun --nnodes 2 ... loom-topo --calibrate-network FILE");
  LaunchEnvironment launch = readLaunchEnvironment();
  if (launch.localRank < 0)
    fail(loomInvalidArgument, "--calibrate-network needs each rank's place on its host, which " + launch.launcher +
                                  " does not give: set LOCAL_RANK (0 on each host's first rank)");
  return launch;
}

void check(loomResult_t rc, const char* what) {
  if (rc != loomSuccess) fail(rc, std::string(what) + ": " + loomGetLastError());
}

// The network's latency and bytes per microsecond from the ring's times at
// kNetworkSizes among `hosts`: the ring of H hosts takes 2(H-1) steps, each
// one crossing the network, and puts 2(H-1)/H of the buffer through each
// host's link. No positive slope: another process's burst stalled the
// small calls past the large ones' times.
struct NetworkFit {
  double latencyUs = 0;
  double slope = 0;  // microseconds per byte
};

NetworkFit fitNetwork(const std::vector<double>& us, int hosts) {
  const Traffic small = trafficOf(TunedCollective::kAllReduce, TunedAlgorithm::kRing, hosts, 8);
  NetworkFit fit;
  fit.latencyUs = us[0] / small.steps;
  std::vector<double> bytes, times;
  for (size_t i = 1; i < us.size(); ++i) {
    bytes.push_back(
        trafficOf(TunedCollective::kAllReduce, TunedAlgorithm::kRing, hosts, static_cast<double>(kNetworkSizes[i]))
            .bytes);
    times.push_back(us[i]);
  }
  fit.slope = fitSlope(bytes, times, small.steps * fit.latencyUs);
  return fit;
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  return date;
}

}  // namespace

void calibrateNetwork(std::ostream& report, const std::string& outPath) {
  const LaunchEnvironment launch = launchOf();
  const int local = launch.localRank;
  // The rank that writes the file (rank 0, its host's first) refuses one
  // that is no tuning file before anyone measures (the launcher then stops
  // the others).
  CostConstants costs = launch.rank == 0 ? costsToUpdate(outPath) : defaultCosts();
  // Every rank measures built-in schedules, nothing a file or LOOM_ALGO
  // chose: one communicator of the hosts' first ranks for the ring, one for
  // all-pairs (a communicator reads LOOM_ALGO as it forms).
  unsetenv("LOOM_TUNING_FILE");
  setenv("LOOM_ALGO", "allreduce:ring", 1);
  // The other ranks wait in a barrier while the hosts' first ranks measure:
  // on a slow link that takes a while.
  loomConfig_t config = LOOM_CONFIG_INITIALIZER;
  config.timeoutMs = 600000;
  loomComm_t world = nullptr;
  check(loomCommInitFromEnv(&world, &config), "joining the job");
  // Every rank learns how many hosts there are, so that all refuse one host
  // alike.
  int hostCount = local == 0 ? 1 : 0;
  check(loomAllReduce(&hostCount, &hostCount, 1, loomInt32, loomSum, world, nullptr, nullptr), "counting the hosts");
  if (hostCount < 2) {
    loomCommDestroy(world);
    fail(loomInvalidArgument,
         "--calibrate-network found every rank on one host (LOCAL_RANK 0 once): it measures the network between "
         "hosts; launch it on at least two");
  }
  const int color = local == 0 ? 0 : LOOM_SPLIT_NOCOLOR;
  loomComm_t ring = nullptr, allPairs = nullptr;
  check(loomCommSplit(world, color, 0, &ring, &config), "forming one rank per host");
  setenv("LOOM_ALGO", "allreduce:allpairs", 1);
  check(loomCommSplit(world, color, 0, &allPairs, &config), "forming one rank per host");
  if (ring == nullptr) {  // not its host's first rank: nothing to measure
    check(loomBarrier(world, nullptr), "waiting for the measurement");
    loomCommDestroy(world);
    return;
  }
  int count = 0, index = 0;
  check(loomCommCount(ring, &count), "counting the hosts");
  check(loomCommUserRank(ring, &index), "numbering the hosts");

  std::vector<float> send(kNetworkSizes[4] / sizeof(float) + 1, 1.0f), recv(send.size());
  // The first host's first rank fits its times, which go into the file;
  // where they have no slope, all measure again (a bounded number of
  // times), as its verdict, broadcast, says.
  std::vector<double> us;
  for (int attempt = 1;; ++attempt) {
    us.clear();
    for (size_t bytes : kNetworkSizes) us.push_back(timeCalls(ring, 0, bytes, count, send.data(), recv.data()));
    int grew = fitNetwork(us, count).slope > 0 ? 1 : 0;
    check(loomBroadcast(&grew, &grew, 1, loomInt32, 0, ring, nullptr, nullptr), "agreeing on the measurement");
    if (grew == 1 || attempt == kCalibrationAttempts) break;
  }
  // All-pairs at 8 B: one step, and 2(H-2) messages beyond one sent and one
  // taken in, which two hosts do not have.
  const double allPairsUs = count >= 3 ? timeCalls(allPairs, 0, 8, count, send.data(), recv.data()) : 0;
  loomCommDestroy(allPairs);
  loomCommDestroy(ring);
  check(loomBarrier(world, nullptr), "ending the measurement");
  loomCommDestroy(world);
  if (index != 0) return;
  if (launch.rank != 0) costs = costsToUpdate(outPath);  // a launcher whose rank 0 is no host's first

  LinkCosts& network = costs.network;
  const NetworkFit fit = fitNetwork(us, count);
  if (!(fit.slope > 0))
    fail(loomSystemError, "the ring's time did not grow with its size in " + std::to_string(kCalibrationAttempts) +
                              " measurements: the network was too busy to measure; run it again");
  network.latencyUs = fit.latencyUs;
  network.bytesPerUs = 1 / fit.slope;
  const Traffic allPairsSmall = trafficOf(TunedCollective::kAllReduce, TunedAlgorithm::kAllPairs, count, 8);
  if (allPairsSmall.messages > 0)
    network.messageUs = std::max(0.0, (allPairsUs - network.latencyUs) / allPairsSmall.messages);

  report << "measured between " << count << " hosts (the first rank of each), ring AllReduce, microseconds per call "
         << "(fastest of 3):";
  for (size_t i = 0; i < us.size(); ++i) report << " " << kNetworkSizes[i] << " B " << us[i];
  report << "\n";
  if (count >= 3) report << "all-pairs AllReduce of 8 B: " << allPairsUs << " microseconds per call\n";
  char host[256] = "this host";
  gethostname(host, sizeof(host) - 1);
  const std::string header =
      "Loom cost constants (docs/ENGINE.md, \"Algorithm choice\"), for LOOM_TUNING_FILE.\n"
      "network: measured by loom-topo --calibrate-network from " +
      std::string(host) + ", " + today() + ", between " + std::to_string(count) + " hosts" +
      (count >= 3 ? std::string() : std::string(" (message_us as it was: measuring it takes three hosts)")) +
      ". The other constants as the file had them (or built in: loom-topo --calibrate measures shared memory).";
  writeTuning(report, costs, header, outPath);
}

}  // namespace loom::topo

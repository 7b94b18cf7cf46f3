// loom-topo: shows the machine Loom sees, so a misread machine is visible,
// checkable (--check) and correctable (--xml, edit, LOOM_TOPO_FILE).
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "core/config.h"
#include "core/version_banner.h"
#include "loom_topo/calibrate.h"
#include "loom_topo/numa_check.h"
#include "loom_topo/report.h"
#include "loom_topo/versions.h"
#include "topology/nccl_xml.h"
#include "topology/placement.h"
#include "topology/topology_file.h"

namespace {

const char* kUsage =
    "usage: loom-topo [--topo-file FILE] [--xml | --json | --dot] [--ranks N | --hosts N0,N1,...]\n"
    "                 [--map-by core|socket|numa] [--check] [--plan] [--calibrate FILE] [--no-versions]\n"
    "                 [--calibrate-network FILE]\n"
    "                 [--simulate [--ranks-per-host R] [--sizes LIST] [--collectives LIST] [--plot PNG]]\n"
    "                 [--version]\n"
    "\n"
    "Prints the versions around Loom, the machine as a tree, the path classes between GPUs, NICs and\n"
    "NUMA nodes (like `nvidia-smi topo -m`), and the ring Loom builds for N ranks placed like mpirun's\n"
    "--map-by (default: one rank per core up to 8, --map-by socket), and which transport connects each\n"
    "pair of those ranks (as LOOM_TRANSPORTS, when set, allows).\n"
    "\n"
    "  --topo-file FILE  show FILE (NCCL topology XML or hwloc XML) as it is, instead of this machine;\n"
    "                    without it, LOOM_TOPO_FILE is loaded as Loom loads it (detection fills the gaps)\n"
    "  --xml             print the topology as NCCL XML (what LOOM_TOPO_DUMP_FILE writes)\n"
    "  --json            print the topology, its links and path matrix as JSON\n"
    "  --dot             print the graph for Graphviz: loom-topo --dot | dot -Tpng > machine.png\n"
    "  --ranks N         ranks to place for the ring\n"
    "  --hosts N0,N1,... a launch across hosts like this one: N0 ranks on host0, N1 on host1, ...\n"
    "                    (ranks numbered host by host, as loomrun --nnodes numbers them)\n"
    "  --map-by POLICY   core, socket or numa, as mpirun (default socket)\n"
    "  --check           measure memory bandwidth and latency between NUMA nodes and cores with pinned\n"
    "                    threads, and flag where they disagree with the detected classes by over 30%\n"
    "  --plan            print only which algorithm each collective takes on that layout at 8 B, 64 KiB,\n"
    "                    1 MiB and 64 MiB and where the choice changes, with the cost model's estimates\n"
    "                    (LOOM_ALGO and LOOM_*_BYTES apply as they do to a communicator)\n"
    "  --calibrate FILE  measure the cost model's constants for this machine (shared memory, ranks taking\n"
    "                    turns on its CPUs, its memory, the socket interconnect) with --ranks local ranks\n"
    "                    (default: one per core, at most 8, at least 2), print them, and write them to\n"
    "                    FILE, which LOOM_TUNING_FILE loads (about a minute)\n"
    "  --calibrate-network FILE  run as every rank of a job on several hosts (loomrun, mpirun, srun):\n"
    "                    measure the network's latency and bandwidth between the hosts' first ranks and\n"
    "                    write them into FILE; either calibration keeps the other's constants in FILE\n"
    "  --simulate        run every algorithm of each collective on virtual ranks of this process (one thread\n"
    "                    drives them all, as many as 4096) over modelled links: on the first 2, 4, 8, ... ranks\n"
    "                    of the layout and on all of them, each rank's result checked exactly; prints the\n"
    "                    predicted time, bus bandwidth, and messages and bytes per link class of each\n"
    "  --ranks-per-host R with --simulate: --hosts H then means H hosts of R ranks each\n"
    "  --sizes LIST      with --simulate: sizes as nccl-tests counts them (default 8,64K,1M; K, M, G suffixes)\n"
    "  --collectives LIST with --simulate: allreduce, allgather, reducescatter, broadcast, reduce, or all\n"
    "                    (default allreduce)\n"
    "  --plot PNG        with --simulate: draw predicted time against ranks with gnuplot into PNG\n"
    "  --no-versions     skip the versions section\n"
    "  --version         print Loom's version and build, and exit\n";

struct Options {
  std::string topoFile;
  std::string format = "text";  // text, xml, json, dot
  int ranks = 0;
  std::vector<int> ranksPerHost;  // --hosts
  std::string mapBy = "socket";
  bool check = false;
  bool plan = false;
  std::string calibrateTo;         // --calibrate FILE
  std::string calibrateNetworkTo;  // --calibrate-network FILE
  bool versions = true;
  bool simulate = false;
  int ranksPerHostEach = 0;  // --ranks-per-host
  std::vector<loom::TunedCollective> collectives{loom::TunedCollective::kAllReduce};
  std::vector<size_t> sizes{8, 64 << 10, 1 << 20};
  std::string plotTo;
  bool sizesGiven = false;
  bool collectivesGiven = false;
};

[[noreturn]] void usageError(const std::string& message) {
  std::cerr << "loom-topo: " << message << "\n" << kUsage;
  std::exit(2);
}

// "2,2" or "1,2,3": ranks on each host.
std::vector<int> parseHosts(const std::string& text) {
  std::vector<int> counts;
  long total = 0;
  size_t at = 0;
  for (;;) {
    const size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char* end = nullptr;
    const long n = item.empty() ? 0 : std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || n < 1 || n > 65536)
      usageError("--hosts " + text + ": each host's number of ranks must be a whole number from 1 to 65536, not '" +
                 item + "'");
    total += n;
    if (total > 65536 || counts.size() >= 4096)
      usageError("--hosts " + text + " names more than 65536 ranks or 4096 hosts");
    counts.push_back(static_cast<int>(n));
    if (comma == std::string::npos) return counts;
    at = comma + 1;
  }
}

// "8,64K,1M": sizes in bytes, as all_reduce_perf -b reads them.
std::vector<size_t> parseSizes(const std::string& text) {
  std::vector<size_t> sizes;
  size_t at = 0;
  for (;;) {
    const size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char* end = nullptr;
    const unsigned long long n = item.empty() || item[0] == '-' ? 0 : std::strtoull(item.c_str(), &end, 10);
    size_t scale = 1;
    if (n > 0 && *end != '\0') {
      const std::string unit = end;
      scale = unit == "K" || unit == "KiB"   ? size_t{1} << 10
              : unit == "M" || unit == "MiB" ? size_t{1} << 20
              : unit == "G" || unit == "GiB" ? size_t{1} << 30
                                             : 0;
    }
    if (n == 0 || scale == 0 || n > (size_t{1} << 40) / scale)
      usageError("--sizes " + text + ": '" + item + "' is not a size from 1 byte to 1 TiB (8, 64K, 1M, 2G)");
    if (std::find(sizes.begin(), sizes.end(), static_cast<size_t>(n) * scale) == sizes.end())
      sizes.push_back(static_cast<size_t>(n) * scale);
    if (comma == std::string::npos) return sizes;
    at = comma + 1;
  }
}

std::vector<loom::TunedCollective> parseCollectives(const std::string& text) {
  using loom::TunedCollective;
  const std::pair<const char*, TunedCollective> kNames[] = {{"allreduce", TunedCollective::kAllReduce},
                                                            {"allgather", TunedCollective::kAllGather},
                                                            {"reducescatter", TunedCollective::kReduceScatter},
                                                            {"broadcast", TunedCollective::kBroadcast},
                                                            {"reduce", TunedCollective::kReduce}};
  std::vector<TunedCollective> chosen;
  size_t at = 0;
  for (;;) {
    const size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    bool known = false;
    for (const auto& [name, collective] : kNames) {
      if (item == "all" || item == name) {
        if (std::find(chosen.begin(), chosen.end(), collective) == chosen.end()) chosen.push_back(collective);
        known = true;
      }
    }
    if (!known)
      usageError("--collectives " + text + ": '" + item +
                 "' is not one of allreduce, allgather, reducescatter, broadcast, reduce, all");
    if (comma == std::string::npos) return chosen;
    at = comma + 1;
  }
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usageError(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      std::exit(0);
    } else if (a == "--version" || a == "-V") {
      std::cout << "loom-topo: " << loom::versionBanner() << "\n";
      std::exit(0);
    } else if (a == "--topo-file") {
      o.topoFile = value();
    } else if (a == "--xml" || a == "--json" || a == "--dot") {
      o.format = a.substr(2);
    } else if (a == "--ranks") {
      std::string v = value();
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (*end != '\0' || n < 1 || n > 65536) usageError("--ranks " + v + " is not a number of ranks (1 to 65536)");
      o.ranks = static_cast<int>(n);
    } else if (a == "--hosts") {
      o.ranksPerHost = parseHosts(value());
    } else if (a == "--map-by") {
      o.mapBy = value();
      if (o.mapBy != "core" && o.mapBy != "socket" && o.mapBy != "numa") {
        usageError("--map-by " + o.mapBy + " is not one of core, socket, numa");
      }
    } else if (a == "--check") {
      o.check = true;
    } else if (a == "--calibrate") {
      o.calibrateTo = value();
    } else if (a == "--calibrate-network") {
      o.calibrateNetworkTo = value();
    } else if (a == "--plan") {
      o.plan = true;
    } else if (a == "--simulate") {
      o.simulate = true;
    } else if (a == "--ranks-per-host") {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < 1 || n > 4096)
        usageError("--ranks-per-host " + v + " is not a number of ranks (1 to 4096)");
      o.ranksPerHostEach = static_cast<int>(n);
    } else if (a == "--sizes") {
      o.sizes = parseSizes(value());
      o.sizesGiven = true;
    } else if (a == "--collectives") {
      o.collectives = parseCollectives(value());
      o.collectivesGiven = true;
    } else if (a == "--plot") {
      o.plotTo = value();
      if (o.plotTo.empty()) usageError("--plot needs a file name");
    } else if (a == "--no-versions") {
      o.versions = false;
    } else {
      usageError("unknown option " + a);
    }
  }
  if (!o.ranksPerHost.empty() && o.ranks > 0) usageError("give --ranks or --hosts, not both");
  if (!o.calibrateTo.empty() &&
      (o.plan || o.format != "text" || o.check || !o.ranksPerHost.empty() || !o.topoFile.empty()))
    usageError(
        "--calibrate measures ranks of this host alone: leave out --plan, --xml, --json, --dot, --check, --hosts and "
        "--topo-file");
  if (!o.calibrateNetworkTo.empty() && (o.plan || o.format != "text" || o.check || !o.ranksPerHost.empty() ||
                                        o.ranks > 0 || !o.calibrateTo.empty() || o.simulate))
    usageError("--calibrate-network measures the job it runs in: leave out every other option but --no-versions");
  if (o.plan && (o.format != "text" || o.check))
    usageError("--plan prints text alone: leave out --xml, --json, --dot and --check");
  if (!o.simulate && (o.ranksPerHostEach > 0 || !o.plotTo.empty() || o.sizesGiven || o.collectivesGiven))
    usageError("--ranks-per-host, --sizes, --collectives and --plot go with --simulate");
  if (o.simulate) {
    if (o.plan || o.format != "text" || o.check || !o.calibrateTo.empty())
      usageError("--simulate prints text alone: leave out --plan, --calibrate, --xml, --json, --dot and --check");
    if (o.ranksPerHostEach > 0) {
      if (o.ranksPerHost.empty()) usageError("--ranks-per-host R needs --hosts H, the number of hosts of R ranks each");
      if (o.ranksPerHost.size() != 1)
        usageError("with --ranks-per-host, --hosts gives the number of hosts (one number), not a list");
      o.ranksPerHost.assign(o.ranksPerHost[0], o.ranksPerHostEach);
    } else if (o.ranksPerHost.empty()) {
      o.ranksPerHost = {o.ranks > 0 ? o.ranks : 8};
    }
    long total = 0;
    for (int n : o.ranksPerHost) total += n;
    if (total > 4096) usageError("--simulate runs at most 4096 ranks; " + std::to_string(total) + " were asked for");
  }
  return o;
}

std::unique_ptr<loom::topo::Topology> load(const Options& o) {
  if (!o.topoFile.empty()) return loom::topo::readTopologyFile(o.topoFile, nullptr);
  // What a communicator would load: LOOM_TOPO_FILE if set, else detection.
  return loom::topo::loadTopology(loom::topologyFileFromEnvironment(), "");
}

int defaultRanks(const loom::topo::Topology& t) {
  return std::max(2, std::min(8, static_cast<int>(t.pus.size())));
}

std::vector<int> layoutOf(const Options& o, const loom::topo::Topology& t) {
  return !o.ranksPerHost.empty() ? o.ranksPerHost : std::vector<int>{o.ranks > 0 ? o.ranks : defaultRanks(t)};
}

const char* transportsSetting() {
  return std::getenv("LOOM_TRANSPORTS") ? std::getenv("LOOM_TRANSPORTS") : "";
}

void printText(const Options& o, const loom::topo::Topology& t) {
  if (o.simulate) {
    std::cout << "== Simulation\n";
    loom::topo::SimulationRequest request{o.ranksPerHost, transportsSetting(), o.collectives, o.sizes, o.plotTo};
    loom::topo::printSimulation(std::cout, request);
    return;
  }
  if (!o.calibrateNetworkTo.empty()) {
    std::ostringstream report;
    loom::topo::calibrateNetwork(report, o.calibrateNetworkTo);
    // Only the rank that wrote the file reports.
    if (!report.str().empty()) std::cout << "== Network calibration\n" << report.str();
    return;
  }
  if (!o.calibrateTo.empty()) {
    std::cout << "== Calibration\n";
    loom::topo::calibrate(std::cout, t, o.ranks > 0 ? o.ranks : defaultRanks(t), o.calibrateTo);
    return;
  }
  if (o.plan) {
    // Whole, or not at all: a malformed setting is said without a half section.
    std::ostringstream plan;
    loom::topo::printPlan(plan, t, layoutOf(o, t), o.mapBy, transportsSetting());
    std::cout << "== Plan\n" << plan.str();
    return;
  }
  if (o.versions) {
    std::cout << "== Versions\n";
    loom::topo::printVersions(std::cout, loom::topo::collectVersions());
    std::cout << "\n";
  }
  std::cout << "== Topology\n";
  loom::topo::printTree(std::cout, t);
  std::cout << "\n== Paths\n";
  loom::topo::printMatrix(std::cout, t);
  const std::vector<int> layout = layoutOf(o, t);
  std::cout << "\n== Rings\n";
  loom::topo::printRings(std::cout, t, layout, o.mapBy);
  std::cout << "\n== Transports\n";
  loom::topo::printTransports(std::cout, layout, transportsSetting());
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  try {
    auto t = load(o);
    if (o.format == "xml") {
      std::cout << loom::topo::ncclXml(*t);
    } else if (o.format == "json") {
      std::cout << loom::topo::topologyJson(*t);
    } else if (o.format == "dot") {
      std::cout << loom::topo::topologyDot(*t);
    } else {
      printText(o, *t);
    }
    if (o.check) {
      std::cout << (o.format == "text" ? "\n== Check\n" : "");
      loom::topo::runNumaCheck(*t, o.format == "text" ? std::cout : std::cerr);
    }
  } catch (const loom::Error& e) {
    std::cerr << "loom-topo: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "loom-topo: out of memory\n";
    return 1;
  } catch (const std::exception& e) {
    // Loom's readers turn every failure into a loom::Error with file:line;
    // anything else is a bug, but still a sentence and an exit code, never
    // std::terminate.
    std::cerr << "loom-topo: internal error (please report it with the topology file): " << e.what() << "\n";
    return 1;
  }
  return 0;
}

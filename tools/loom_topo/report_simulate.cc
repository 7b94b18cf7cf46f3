// loom-topo --simulate: every algorithm of the chosen collectives run by the
// schedule simulator (tools/simulate/) on a launch the user describes, as
// its rank count grows, with the predicted time, bus bandwidth and traffic
// per link class of each, and a gnuplot drawing of time against ranks.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>

#include "base/error.h"
#include "core/config.h"
#include "loom_topo/report.h"
#include "simulate/simulation.h"
#include "transport/mem/mem_fabric.h"

namespace loom::topo {
namespace {

constexpr size_t kMemoryBudget = size_t{2} << 30;  // the most one point may take here

std::string sizeText(size_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (unit < 3 && value >= 1024) value /= 1024, ++unit;
  char text[32];
  std::snprintf(text, sizeof(text), value == static_cast<double>(static_cast<uint64_t>(value)) ? "%.0f %s" : "%.1f %s",
                value, kUnits[unit]);
  return text;
}

// A string in single quotes for gnuplot, which doubles a quote inside.
std::string gnuplotString(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string number(double value, const char* format) {
  char text[48];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

// 2, 4, 8, ... below the layout's ranks, then all of them.
std::vector<int> rankCounts(int total) {
  std::vector<int> counts;
  for (int p = 2; p < total; p *= 2) counts.push_back(p);
  counts.push_back(total);
  return counts;
}

// The first `p` ranks of the layout, host by host.
std::vector<int> hostsOfFirst(const std::vector<int>& ranksPerHost, int p) {
  std::vector<int> hostOf;
  for (size_t h = 0; h < ranksPerHost.size() && static_cast<int>(hostOf.size()) < p; ++h)
    for (int i = 0; i < ranksPerHost[h] && static_cast<int>(hostOf.size()) < p; ++i)
      hostOf.push_back(static_cast<int>(h));
  return hostOf;
}

int hostsIn(const std::vector<int>& hostOf) {
  return hostOf.empty() ? 0 : hostOf.back() + 1;
}

struct Line {
  simulate::SimulatedPoint point;
  std::string note;  // why it did not run, or what ran instead; empty when it ran as asked
};

void printHeader(std::ostream& os) {
  os << "  " << padded("ranks", 7) << padded("hosts", 7) << padded("algorithm", 17) << padded("time (us)", 12)
     << padded("busbw GB/s", 12) << padded("steps", 8) << padded("local msgs", 12) << padded("local bytes", 13)
     << padded("net msgs", 10) << padded("net bytes", 12) << "simulated in\n";
}

void printLine(std::ostream& os, const Line& line, int hosts) {
  const simulate::SimulatedPoint& p = line.point;
  os << "  " << padded(std::to_string(p.nranks), 7) << padded(std::to_string(hosts), 7) << padded(p.asked, 17);
  if (!line.note.empty()) {
    os << line.note << "\n";
    return;
  }
  os << padded(number(p.predictedUs, p.predictedUs < 100 ? "%.2f" : "%.1f"), 12) << padded(number(p.busGBs, "%.2f"), 12)
     << padded(std::to_string(p.steps), 8) << padded(std::to_string(p.local.messages), 12)
     << padded(sizeText(p.local.bytes), 13) << padded(std::to_string(p.network.messages), 10)
     << padded(sizeText(p.network.bytes), 12) << number(p.wallSeconds, "%.2f s")
     << (p.asked == "auto" ? " (" + p.ran + ")" : "") << "\n";
}

// gnuplot draws one panel per size: predicted time against ranks, a line per algorithm.
void plot(const std::string& png, const std::vector<TunedCollective>& collectives, const std::vector<size_t>& sizes,
          const std::map<std::pair<TunedCollective, size_t>, std::vector<Line>>& lines) {
  char directory[] = "/tmp/loom-simulate-XXXXXX";
  if (mkdtemp(directory) == nullptr) fail(loomSystemError, "cannot make a temporary folder for the plot's data");
  const std::string data = std::string(directory) + "/points.dat";
  const std::string script = std::string(directory) + "/plot.gp";
  std::ofstream out(data);
  std::ofstream gp(script);
  const int panels = static_cast<int>(collectives.size() * sizes.size());
  gp << "set terminal pngcairo size 640," << 420 * panels << " font ',9'\n"
     << "set output " << gnuplotString(png) << "\nset multiplot layout " << panels << ",1\n"
     << "set logscale xy 2\nset xlabel 'ranks'\nset ylabel 'predicted time (us)'\nset key left top\nset grid\n";
  int block = 0;
  for (TunedCollective c : collectives)
    for (size_t bytes : sizes) {
      const std::string key = std::string(collectiveName(c)) + " " + sizeText(bytes);
      auto found = lines.find({c, bytes});
      if (found == lines.end()) continue;
      std::map<std::string, std::vector<const Line*>> byAlgorithm;
      for (const Line& line : found->second)
        // A log scale has no place for a call that moved nothing (a size under a rank's element).
        if (line.note.empty() && line.point.asked != "auto" && line.point.predictedUs > 0)
          byAlgorithm[line.point.asked].push_back(&line);
      if (byAlgorithm.empty()) continue;
      gp << "set title " << gnuplotString(key) << "\nplot ";
      bool first = true;
      for (const auto& [algorithm, points] : byAlgorithm) {
        out << "# " << key << " " << algorithm << "\n";
        for (const Line* line : points) out << line->point.nranks << " " << line->point.predictedUs << "\n";
        out << "\n\n";
        gp << (first ? "" : ", ") << gnuplotString(data) << " index " << block++ << " with linespoints title "
           << gnuplotString(algorithm);
        first = false;
      }
      gp << "\n";
    }
  gp << "unset multiplot\n";
  out.close();
  gp.close();
  const bool written = !out.fail() && !gp.fail();
  std::string said;
  int status = -1;
  if (written) {
    const std::string command = "gnuplot " + gnuplotString(script) + " 2>&1";
    if (FILE* pipe = popen(command.c_str(), "r")) {
      char buffer[256];
      while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) said += buffer;
      status = pclose(pipe);
    }
  }
  std::remove(data.c_str());
  std::remove(script.c_str());
  rmdir(directory);
  if (!written) fail(loomSystemError, "cannot write the plot's data under " + std::string(directory));
  if (status == -1) fail(loomSystemError, "cannot run gnuplot to draw " + png);
  if (status != 0)
    fail(loomSystemError, "gnuplot could not draw " + png +
                              (WIFEXITED(status) && WEXITSTATUS(status) == 127
                                   ? std::string(": gnuplot is not installed (apt-get install gnuplot-nox)")
                                   : ": " + said.substr(0, 400)));
}

}  // namespace

void printSimulation(std::ostream& os, const SimulationRequest& request) {
  const CommConfig config = readCommConfig(nullptr);
  const std::vector<int>& layout = request.ranksPerHost;
  int total = 0;
  for (int n : layout) total += n;
  simulate::SimulationLayout base;
  base.shape = layoutSlots(layout, request.transports);
  base.tuning = config.tuning;
  base.memoryBudget = kMemoryBudget;
  const CostConstants& costs = base.tuning.costs;
  os << total << " virtual ranks on " << layout.size() << (layout.size() == 1 ? " host" : " hosts")
     << ", simulated at 2, 4, 8, ... ranks (host by host); links: shared memory " << costs.sharedMemory.latencyUs
     << " us, " << costs.sharedMemory.bytesPerUs / 1000 << " GB/s a rank; network " << costs.network.latencyUs
     << " us, " << costs.network.bytesPerUs / 1000 << " GB/s a host"
     << (config.tuningFile.empty() ? std::string(" (the cost model's built-in constants)")
                                   : " (from LOOM_TUNING_FILE=" + config.tuningFile + ")")
     << "; slots " << base.shape.slots << " x " << sizeText(base.shape.bytes) << "\n"
     << "Every rank's result is checked exactly. The time is the timeline's: copies in and out of slots at the\n"
        "shared-memory rate, each host's network link shared by its ranks, a latency per message.\n";
  std::map<std::pair<TunedCollective, size_t>, std::vector<Line>> lines;
  for (TunedCollective c : request.collectives) {
    std::vector<TunedAlgorithm> algorithms = simulate::simulatedAlgorithms(c);
    algorithms.push_back(TunedAlgorithm::kCount);  // auto
    for (size_t bytes : request.sizes) {
      const std::string key = std::string(collectiveName(c)) + " " + sizeText(bytes);
      os << "\n" << key << ":\n";
      printHeader(os);
      for (int p : rankCounts(total)) {
        simulate::SimulationLayout at = base;
        at.hostOf = hostsOfFirst(layout, p);
        for (TunedAlgorithm a : algorithms) {
          Line line;
          line.point.nranks = p;
          line.point.asked = a == TunedAlgorithm::kCount ? "auto" : algorithmName(a);
          const size_t need = simulate::simulationMemoryBytes(c, a, p, bytes, base.shape);
          if (need > kMemoryBudget) {
            line.note = "skipped: it needs " + sizeText(need) + " of memory here, over " + sizeText(kMemoryBudget);
          } else {
            try {
              line.point = simulate::simulatePoint(at, c, a, bytes);
              if (a != TunedAlgorithm::kCount && line.point.ran != algorithmName(a))
                line.note = "does not apply here (runs " + line.point.ran + ")";
            } catch (const mem::BufferLimitReached& e) {
              line.note = std::string("skipped: ") + e.what() + " (" + sizeText(kMemoryBudget) + " here)";
            }
          }
          printLine(os, line, hostsIn(at.hostOf));
          os.flush();
          lines[{c, bytes}].push_back(line);
        }
      }
    }
  }
  if (!request.plotTo.empty()) {
    plot(request.plotTo, request.collectives, request.sizes, lines);
    os << "\nDrawn: " << request.plotTo << "\n";
  }
}

}  // namespace loom::topo

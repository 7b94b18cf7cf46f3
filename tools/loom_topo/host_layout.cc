// A simulated launch across hosts: every host like this machine, ranks
// numbered host by host, as loomrun --nnodes and loom-hosts.sh number them.
#include <cstring>

#include "loom_topo/report.h"

namespace loom::topo {

std::vector<RankPlacement> simulateHosts(const Topology& t, const std::vector<int>& ranksPerHost,
                                         const std::string& mapBy) {
  std::vector<RankPlacement> all;
  for (size_t host = 0; host < ranksPerHost.size(); ++host) {
    std::vector<RankPlacement> placed = simulatePlacements(t, ranksPerHost[host], mapBy);
    for (RankPlacement& p : placed) {
      // One host keeps the machine's own name; several need names that differ.
      if (ranksPerHost.size() > 1) {
        std::memset(p.host, 0, sizeof(p.host));
        std::snprintf(p.host, sizeof(p.host), "host%zu", host);
      }
      all.push_back(p);
    }
  }
  return all;
}

}  // namespace loom::topo

// The socket interconnect's constants for `loom-topo --calibrate`, where
// this process may run on two sockets: what a step between ranks of two
// sockets waits beyond one within a socket (a cache line bounced across
// against one bounced within), and what the CPUs of one socket copy out of
// the other's memory at once (the interconnect's bandwidth each way).
#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "loom_topo/calibrate.h"
#include "loom_topo/numa_measure.h"

namespace loom::topo {

void calibrateSockets(std::ostream& report, const Topology& t, const std::vector<int>& cpus, CostConstants& costs) {
  std::map<int, std::vector<int>> bySocket;
  for (int cpu : cpus) {
    const Pu* pu = t.findPu(cpu);
    if (pu != nullptr && pu->package >= 0) bySocket[pu->package].push_back(cpu);
  }
  if (bySocket.size() < 2) return;  // one socket: nothing crosses
  const std::vector<int>& near = bySocket.begin()->second;
  const std::vector<int>& far = std::next(bySocket.begin())->second;
  constexpr int kRounds = 200000;
  const double acrossNs = detail::measurePingPong(near[0], far[0], kRounds);
  const double withinNs = near.size() > 1 ? detail::measurePingPong(near[0], near[1], kRounds) : 0;
  const double copiedBytesPerUs = detail::measureCopyBytesPerUs(near, size_t{16} << 20, far[0]);
  const int a = bySocket.begin()->first, b = std::next(bySocket.begin())->first;
  report << "  sockets " << a << " and " << b << ": a cache line crosses in " << shortNumber(acrossNs) << " ns ("
         << (near.size() > 1 ? shortNumber(withinNs) + " within socket " + std::to_string(a)
                             : "socket " + std::to_string(a) + " has one CPU: the whole trip counts")
         << "); socket " << a << "'s " << near.size() << (near.size() == 1 ? " CPU copies " : " CPUs copy ")
         << shortNumber(copiedBytesPerUs) << " bytes/us out of socket " << b << "'s memory\n";
  LinkCosts& socket = costs.socketLink;
  socket.latencyUs = costs.sharedMemory.latencyUs + std::max(0.0, acrossNs - withinNs) / 1000;
  socket.bytesPerUs = copiedBytesPerUs;
  socket.messageUs = costs.sharedMemory.messageUs;
}

}  // namespace loom::topo

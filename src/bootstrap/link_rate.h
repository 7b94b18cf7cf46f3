// The rate an interface's link carries, as this host's kernel knows it:
// the NIC's speed (what `ethtool` prints; NCCL's socket transport reads the
// same number from /sys/class/net/<if>/speed, which answers for the network
// namespace sysfs was mounted in, where ETHTOOL_GSET answers for the
// caller's), or less where the interface's root queue is a token bucket
// (`tc qdisc ... root tbf rate R`) that holds what leaves it to R. The cost
// model's network bandwidth follows the slowest rank's (core/communicator.cc).
#pragma once

#include <cstdint>
#include <string>

namespace loom::bootstrap {

struct LinkRate {
  int64_t mbps = 0;  // megabits per second; 0: the kernel does not say
  // What gave it, for log lines: "speed 10000 Mb/s", "tbf 2000 Mbit/s
  // (speed 10000 Mb/s)", or why there is none.
  std::string source;
};

// Never throws: an interface whose rate the kernel does not give (a
// virtual NIC without a speed, a socket that cannot be opened) has none.
LinkRate linkRateOf(const std::string& interfaceName);

}  // namespace loom::bootstrap

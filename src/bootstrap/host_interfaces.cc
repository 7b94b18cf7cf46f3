#include "bootstrap/host_interfaces.h"

#include <ifaddrs.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>

#include "base/error.h"

namespace loom::bootstrap {
namespace {

// The netmask's leading one bits (getifaddrs gives the mask as an address);
// without one, the address alone (a /32 or /128), the narrowest subnet.
int prefixLength(const sockaddr* netmask, int family) {
  const int full = family == AF_INET6 ? 128 : 32;
  if (netmask == nullptr || netmask->sa_family != family) return full;
  uint16_t ignoredPort = 0;
  const IpAddress mask = fromSockaddr(netmask, &ignoredPort);
  int bits = 0;
  while (bits < full && (mask.bytes[bits / 8] & (0x80 >> (bits % 8))) != 0) ++bits;
  return bits;
}

}  // namespace

std::vector<HostInterface> upInterfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) failSystem("getifaddrs (listing this host's network interfaces)", errno);
  std::vector<HostInterface> up;
  for (const ifaddrs* it = list; it != nullptr; it = it->ifa_next) {
    if ((it->ifa_flags & IFF_UP) == 0 || (it->ifa_flags & IFF_RUNNING) == 0) continue;
    // Every interface comes first with its link (AF_PACKET) entry, so an
    // interface up without an address is still listed, in link order.
    auto at = std::find_if(up.begin(), up.end(), [&](const HostInterface& i) { return i.name == it->ifa_name; });
    if (at == up.end()) at = up.insert(up.end(), HostInterface{it->ifa_name, {}});
    if (it->ifa_addr == nullptr) continue;
    const int family = it->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    uint16_t port = 0;
    at->addresses.push_back({fromSockaddr(it->ifa_addr, &port), prefixLength(it->ifa_netmask, family)});
  }
  freeifaddrs(list);
  return up;
}

ChosenInterface findInterface(const InterfaceRequest& request, const std::optional<IpAddress>& rendezvous) {
  return chooseInterface(upInterfaces(), request, rendezvous);
}

}  // namespace loom::bootstrap

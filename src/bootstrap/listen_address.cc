#include "bootstrap/listen_address.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "base/error.h"
#include "bootstrap/socket.h"

namespace loom::bootstrap {

bool isLocalAddress(uint32_t ipv4) {
  // Asking the kernel is the one answer that matches what bind() will do
  // (secondary addresses, 127.0.0.0/8, addresses added after start).
  Socket probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe.valid()) failSystem("socket", errno);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = ipv4;
  addr.sin_port = 0;
  if (bind(probe.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) return true;
  return errno != EADDRNOTAVAIL;  // another failure is the real bind's to report
}

uint32_t masterListenAddress(const std::string& masterAddr, uint32_t masterIpv4, const std::string& interfaceName) {
  if (isLocalAddress(masterIpv4)) return masterIpv4;
  if (!interfaceName.empty()) return advertisedAddress(interfaceName);
  fail(loomInvalidUsage, "rank 0 runs the rendezvous and listens on MASTER_ADDR, but MASTER_ADDR='" + masterAddr +
                             "' (" + ipv4Text(masterIpv4) +
                             ") is not an address of this host; run rank 0 where MASTER_ADDR points, or set "
                             "LOOM_SOCKET_IFNAME to the interface rank 0 should listen on (behind NAT or a "
                             "Kubernetes service)");
}

}  // namespace loom::bootstrap

#include "bootstrap/listen_address.h"

#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>

#include "base/error.h"
#include "bootstrap/host_interfaces.h"
#include "bootstrap/socket.h"

namespace loom::bootstrap {

bool isLocalAddress(const IpAddress& address) {
  // Asking the kernel is the one answer that matches what bind() will do
  // (secondary addresses, 127.0.0.0/8, addresses added after start).
  Socket probe(::socket(address.family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe.valid())
    failSystem(std::string("cannot open an ") + (address.isIpv6() ? "IPv6" : "IPv4") + " socket to check whether " +
                   address.toString() + " is an address of this host",
               errno);
  sockaddr_storage addr{};
  const socklen_t length = toSockaddr(address, 0, &addr);
  if (bind(probe.fd(), reinterpret_cast<sockaddr*>(&addr), length) == 0) return true;
  return errno != EADDRNOTAVAIL;  // another failure is the real bind's to report
}

IpAddress masterListenAddress(const std::string& masterAddr, const IpAddress& master, const InterfaceRequest& request) {
  if (isLocalAddress(master)) return master;
  if (request.list) return findInterface(request).address;
  fail(loomInvalidUsage, "rank 0 runs the rendezvous and listens on MASTER_ADDR, but MASTER_ADDR='" + masterAddr +
                             "' (" + master.toString() +
                             ") is not an address of this host; run rank 0 where MASTER_ADDR points, or set "
                             "LOOM_SOCKET_IFNAME to the interface rank 0 should listen on (behind NAT or a "
                             "Kubernetes service)");
}

}  // namespace loom::bootstrap

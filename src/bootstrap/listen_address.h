// Which local address a rendezvous listens on: exactly where the ranks were
// told to look, never every interface of the host, so a listener meant for
// 127.0.0.1 cannot be reached from the network.
#pragma once

#include <cstdint>
#include <string>

namespace loom::bootstrap {

// For rank 0 of an environment launch: MASTER_ADDR's address (masterIpv4,
// resolved from masterAddr) when this host has it; else, as behind NAT or a
// Kubernetes service where MASTER_ADDR is not the listening host's own
// address, LOOM_SOCKET_IFNAME's (interfaceName). With neither, throws
// loomInvalidUsage saying which to set. (A unique id's rendezvous listens on
// the address the id advertises, advertisedAddress() in socket.h.)
uint32_t masterListenAddress(const std::string& masterAddr, uint32_t masterIpv4, const std::string& interfaceName);

// Whether a socket of this host can bind ipv4: one of its own addresses, or
// any of loopback's 127.0.0.0/8.
bool isLocalAddress(uint32_t ipv4);

}  // namespace loom::bootstrap

// Which local address a rendezvous listens on: exactly where the ranks were
// told to look, never every interface of the host, so a listener meant for
// 127.0.0.1 cannot be reached from the network.
#pragma once

#include <string>

#include "bootstrap/interface_choice.h"
#include "bootstrap/ip_address.h"

namespace loom::bootstrap {

// For rank 0 of an environment launch: MASTER_ADDR's address (master,
// resolved from masterAddr) when this host has it; else, as behind NAT or a
// Kubernetes service where MASTER_ADDR is not the listening host's own
// address, the interface LOOM_SOCKET_IFNAME selects (request). With neither,
// throws loomInvalidUsage saying which to set. (A unique id's rendezvous
// listens on the address the id advertises, findInterface() in
// host_interfaces.h.)
IpAddress masterListenAddress(const std::string& masterAddr, const IpAddress& master, const InterfaceRequest& request);

// Whether a socket of this host can bind `address`: one of its own
// addresses, or any of loopback's 127.0.0.0/8.
bool isLocalAddress(const IpAddress& address);

}  // namespace loom::bootstrap

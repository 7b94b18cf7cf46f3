// The network interfaces of this host, read with getifaddrs, and the one
// Loom uses: what interface_choice.h decides, applied to the real list.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bootstrap/interface_choice.h"

namespace loom::bootstrap {

// Interfaces that are up and running (IFF_UP and IFF_RUNNING, as NCCL asks:
// an interface without carrier cannot carry a connection), in the system's
// order (as `ip addr` lists them), each with its IPv4 and IPv6 addresses
// and their netmasks' prefix lengths.
std::vector<HostInterface> upInterfaces();

// chooseInterface() over upInterfaces().
ChosenInterface findInterface(const InterfaceRequest& request,
                              const std::optional<IpAddress>& rendezvous = std::nullopt);

}  // namespace loom::bootstrap

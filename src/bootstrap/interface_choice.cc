#include "bootstrap/interface_choice.h"

#include "base/error.h"

namespace loom::bootstrap {
namespace {

// NCCL's order when NCCL_SOCKET_IFNAME is unset (ncclFindInterfaces):
// InfiniBand's IP interfaces are the fast ones; docker bridges, loopback
// and libvirt's bridges reach no other host, so they come last.
constexpr const char* kDefaultOrder[] = {"ib", "^docker,lo,virbr", "docker", "lo", "virbr"};

bool wantedFamily(const IpAddress& address, AddressFamily family) {
  if (family == AddressFamily::kIpv4) return !address.isIpv6();
  if (family == AddressFamily::kIpv6) return address.isIpv6();
  return true;
}

bool usable(const IpAddress& address, AddressFamily family) {
  return wantedFamily(address, family) && !address.isLinkLocalIpv6();
}

// The first interface `list` selects with a usable address: IPv4 ones
// first, as NCCL finds them (getifaddrs lists every IPv4 address first).
std::optional<ChosenInterface> firstSelected(const std::vector<HostInterface>& up, const InterfaceList& list,
                                             AddressFamily family) {
  for (const bool ipv6 : {false, true}) {
    for (const HostInterface& interface : up) {
      if (!list.matches(interface.name)) continue;
      for (const IpAddress& address : interface.addresses)
        if (address.isIpv6() == ipv6 && usable(address, family)) return ChosenInterface{interface.name, address};
    }
  }
  return std::nullopt;
}

std::string describeInterfaces(const std::vector<HostInterface>& up) {
  if (up.empty()) return "none";
  std::string text;
  for (const HostInterface& interface : up) {
    if (!text.empty()) text += ", ";
    text += interface.name + " (";
    if (interface.addresses.empty()) text += "no address";
    for (size_t i = 0; i < interface.addresses.size(); ++i) {
      const IpAddress& address = interface.addresses[i];
      text += (i > 0 ? ", " : "") + address.toString();
      if (address.isLinkLocalIpv6()) text += " link-local, never used";
    }
    text += ")";
  }
  return text;
}

}  // namespace

std::string InterfaceRequest::describe() const {
  std::string text = list ? "LOOM_SOCKET_IFNAME='" + list->text + "'" : "LOOM_SOCKET_IFNAME unset";
  if (family != AddressFamily::kAny) text += std::string(", LOOM_SOCKET_FAMILY=") + addressFamilyName(family);
  return text;
}

std::string ChosenInterface::toString(uint16_t port) const {
  return name + ":" + address.toString() + "<" + std::to_string(port) + ">";
}

ChosenInterface chooseInterface(const std::vector<HostInterface>& up, const InterfaceRequest& request) {
  if (request.list) {
    if (auto chosen = firstSelected(up, *request.list, request.family)) return *chosen;
  } else {
    for (const char* stage : kDefaultOrder)
      if (auto chosen = firstSelected(up, parseInterfaceList(stage, "the default order"), request.family))
        return *chosen;
  }
  const std::string addresses = request.family == AddressFamily::kIpv4   ? "an IPv4 address"
                                : request.family == AddressFamily::kIpv6 ? "an IPv6 address"
                                                                         : "an IPv4 or IPv6 address";
  const std::string family = request.family == AddressFamily::kAny
                                 ? ""
                                 : std::string(" (LOOM_SOCKET_FAMILY=") + addressFamilyName(request.family) + ")";
  const std::string what =
      request.list ? "LOOM_SOCKET_IFNAME='" + request.list->text + "' selects no interface" : "no interface";
  fail(loomInvalidArgument,
       what + " that is up and running with " + addresses + family + "; interfaces up: " + describeInterfaces(up));
}

}  // namespace loom::bootstrap

#include "bootstrap/interface_choice.h"

#include <algorithm>

#include "base/error.h"

namespace loom::bootstrap {
namespace {

// NCCL's order when NCCL_SOCKET_IFNAME is unset (ncclFindInterfaces):
// InfiniBand's IP interfaces are the fast ones; then the subnet of the
// rendezvous, when known (between these two stages); docker bridges,
// loopback and libvirt's bridges reach no other host, so they come last.
constexpr const char* kBeforeSubnet = "ib";
constexpr const char* kAfterSubnet[] = {"^docker,lo,virbr", "docker", "lo", "virbr"};

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
      for (const InterfaceAddress& entry : interface.addresses)
        if (entry.address.isIpv6() == ipv6 && usable(entry.address, family))
          return ChosenInterface{interface.name, entry.address, {}};
    }
  }
  return std::nullopt;
}

// NCCL's ncclFindInterfaceMatchSubnet: the first interface with a usable
// address on the same subnet as `rendezvous` (of its family, so at most one
// family can match).
std::optional<ChosenInterface> firstOnSubnetOf(const std::vector<HostInterface>& up, const IpAddress& rendezvous,
                                               AddressFamily family) {
  for (const HostInterface& interface : up)
    for (const InterfaceAddress& entry : interface.addresses)
      if (usable(entry.address, family) && entry.sameSubnet(rendezvous))
        return ChosenInterface{interface.name, entry.address, {}};
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
      const IpAddress& address = interface.addresses[i].address;
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

bool InterfaceAddress::sameSubnet(const IpAddress& other) const {
  if (other.family != address.family) return false;
  // fe80::/64 lies on every interface: only the same interface's is the same link.
  if (address.isLinkLocalIpv6() && other.scopeId != address.scopeId) return false;
  const int bits = std::clamp(prefixLength, 0, address.isIpv6() ? 128 : 32);
  for (int i = 0; i < bits / 8; ++i)
    if (address.bytes[i] != other.bytes[i]) return false;
  if (bits % 8 == 0) return true;
  const uint8_t mask = static_cast<uint8_t>(0xff << (8 - bits % 8));
  return (address.bytes[bits / 8] & mask) == (other.bytes[bits / 8] & mask);
}

std::string ChosenInterface::toString(uint16_t port) const {
  return name + ":" + address.toString() + "<" + std::to_string(port) + ">";
}

ChosenInterface chooseInterface(const std::vector<HostInterface>& up, const InterfaceRequest& request,
                                const std::optional<IpAddress>& rendezvous) {
  const auto decided = [&](ChosenInterface chosen, const std::string& why) {
    chosen.why = why;
    return chosen;
  };
  if (request.list) {
    if (auto chosen = firstSelected(up, *request.list, request.family)) return decided(*chosen, request.describe());
  } else {
    if (auto chosen = firstSelected(up, parseInterfaceList(kBeforeSubnet, "the default order"), request.family))
      return decided(*chosen, request.describe());
    // A rendezvous on loopback is on this host, and 127.0.0.0/8's subnet is
    // lo's alone: it says nothing about which NIC reaches other hosts.
    std::string why = request.describe();
    if (rendezvous && !rendezvous->isLoopback()) {
      if (auto chosen = firstOnSubnetOf(up, *rendezvous, request.family))
        return decided(*chosen, "same subnet as the rendezvous " + rendezvous->toString() + ", " + why);
      why += "; no interface shares a subnet with the rendezvous " + rendezvous->toString();
    }
    for (const char* stage : kAfterSubnet)
      if (auto chosen = firstSelected(up, parseInterfaceList(stage, "the default order"), request.family))
        return decided(*chosen, why);
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

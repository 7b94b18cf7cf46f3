// An IPv4 or IPv6 address, as the bootstrap and the TCP transport pass them
// around: in unique ids, in the TCP setup round's text, in sentences. One
// type for both families keeps every caller family-blind; only sockets
// (socket.cc) and the interface choice look inside.
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace loom::bootstrap {

// LOOM_SOCKET_FAMILY: which family interfaces may offer. kAny, as NCCL with
// NCCL_SOCKET_FAMILY unset: IPv4 first, then IPv6.
enum class AddressFamily { kAny, kIpv4, kIpv6 };

// "AF_INET" or "AF_INET6", NCCL_SOCKET_FAMILY's spellings; empty is kAny.
// Anything else throws loomInvalidArgument naming `variable` and the value.
AddressFamily parseAddressFamily(const std::string& text, const char* variable);
const char* addressFamilyName(AddressFamily family);  // "AF_INET", "AF_INET6" or "any family"

struct IpAddress {
  int family = AF_INET;             // AF_INET or AF_INET6
  std::array<uint8_t, 16> bytes{};  // network order; IPv4 in the first 4
  // IPv6 link-local only: the interface of *this* host it lies on. Means
  // nothing to another host, which is why such addresses are never chosen
  // for others to connect to (interface_choice.h).
  uint32_t scopeId = 0;

  static IpAddress ipv4(uint32_t networkOrder);
  static IpAddress loopback(int family);  // 127.0.0.1 or ::1

  bool isIpv6() const { return family == AF_INET6; }
  uint32_t ipv4NetworkOrder() const;  // IPv4 only
  bool isLinkLocalIpv6() const;       // fe80::/10
  bool isLoopback() const;            // 127.0.0.0/8 or ::1
  // "198.18.0.1", "2001:2::1", "fe80::1%eth0".
  std::string toString() const;
  bool operator==(const IpAddress&) const = default;
};

// A numeric IPv4 or IPv6 address, IPv6 optionally in brackets and with a
// %interface (or %index) scope; nullopt for anything else (host names).
std::optional<IpAddress> parseNumericAddress(const std::string& text);

// MASTER_ADDR and the like: a numeric address is taken as written, whatever
// `family` says (the user named it); a host name resolves to an address of
// `family`, for kAny IPv4 first, as the interface choice prefers it. A
// link-local IPv6 address without its %interface cannot be used and is
// refused. Throws loomInvalidArgument naming `what`.
IpAddress resolveAddress(const std::string& host, AddressFamily family, const char* what);

// The socket address of `address` and `port`; returns its length.
socklen_t toSockaddr(const IpAddress& address, uint16_t port, sockaddr_storage* out);
// The address and port of an AF_INET or AF_INET6 socket address.
IpAddress fromSockaddr(const sockaddr* address, uint16_t* port);

}  // namespace loom::bootstrap

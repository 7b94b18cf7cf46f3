#include "bootstrap/ip_address.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>

#include "base/error.h"

namespace loom::bootstrap {

AddressFamily parseAddressFamily(const std::string& text, const char* variable) {
  if (text.empty()) return AddressFamily::kAny;
  if (text == "AF_INET") return AddressFamily::kIpv4;
  if (text == "AF_INET6") return AddressFamily::kIpv6;
  fail(loomInvalidArgument, std::string(variable) + "='" + text +
                                "' is not a socket family Loom knows: use AF_INET (IPv4) or AF_INET6 (IPv6), as "
                                "NCCL_SOCKET_FAMILY, or unset it for IPv4 first, then IPv6");
}

const char* addressFamilyName(AddressFamily family) {
  switch (family) {
    case AddressFamily::kIpv4: return "AF_INET";
    case AddressFamily::kIpv6: return "AF_INET6";
    case AddressFamily::kAny: break;
  }
  return "any family";
}

IpAddress IpAddress::ipv4(uint32_t networkOrder) {
  IpAddress address;
  address.family = AF_INET;
  std::memcpy(address.bytes.data(), &networkOrder, 4);
  return address;
}

IpAddress IpAddress::loopback(int family) {
  if (family == AF_INET) return ipv4(htonl(INADDR_LOOPBACK));
  IpAddress address;
  address.family = AF_INET6;
  std::memcpy(address.bytes.data(), &in6addr_loopback, 16);
  return address;
}

uint32_t IpAddress::ipv4NetworkOrder() const {
  uint32_t value = 0;
  std::memcpy(&value, bytes.data(), 4);
  return value;
}

bool IpAddress::isLinkLocalIpv6() const {
  return family == AF_INET6 && bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80;
}

bool IpAddress::isLoopback() const {
  if (family == AF_INET) return bytes[0] == 127;
  in6_addr v6;
  std::memcpy(&v6, bytes.data(), 16);
  return IN6_IS_ADDR_LOOPBACK(&v6);
}

std::string IpAddress::toString() const {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(family, bytes.data(), text, sizeof(text));
  std::string result = text;
  if (family == AF_INET6 && scopeId != 0) {
    char name[IF_NAMESIZE] = {};
    result += "%" + std::string(if_indextoname(scopeId, name) != nullptr ? name : std::to_string(scopeId));
  }
  return result;
}

std::optional<IpAddress> parseNumericAddress(const std::string& text) {
  IpAddress address;
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return IpAddress::ipv4(v4.s_addr);
  std::string body = text;
  if (body.size() >= 2 && body.front() == '[' && body.back() == ']') body = body.substr(1, body.size() - 2);
  const size_t percent = body.find('%');
  std::string scope;
  if (percent != std::string::npos) {
    scope = body.substr(percent + 1);
    body.resize(percent);
    if (scope.empty()) return std::nullopt;
  }
  in6_addr v6{};
  if (inet_pton(AF_INET6, body.c_str(), &v6) != 1) return std::nullopt;
  address.family = AF_INET6;
  std::memcpy(address.bytes.data(), &v6, 16);
  if (!scope.empty()) {
    address.scopeId = if_nametoindex(scope.c_str());
    if (address.scopeId == 0 && scope.find_first_not_of("0123456789") == std::string::npos && scope.size() < 10)
      address.scopeId = static_cast<uint32_t>(std::stoul(scope));
    if (address.scopeId == 0) return std::nullopt;
  }
  return address;
}

IpAddress resolveAddress(const std::string& host, AddressFamily family, const char* what) {
  const std::string named = std::string(what) + "='" + host + "'";
  if (std::optional<IpAddress> numeric = parseNumericAddress(host)) {
    if (numeric->isLinkLocalIpv6() && numeric->scopeId == 0)
      fail(loomInvalidArgument, named +
                                    " is a link-local IPv6 address, which means nothing without the interface it "
                                    "lies on: write it with that interface, as in fe80::1%eth0 (each host reads "
                                    "the name as its own interface), or use a global address");
    return *numeric;
  }
  if (host.find('%') != std::string::npos)
    fail(loomInvalidArgument, named + " is not an IPv6 address with the %interface of an interface this host has");
  addrinfo hints{};
  hints.ai_family = family == AddressFamily::kIpv4 ? AF_INET : family == AddressFamily::kIpv6 ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    std::string sentence = named + " is neither an IPv4 or IPv6 address nor a host name that resolves";
    if (family != AddressFamily::kAny)
      sentence += std::string(" to an ") + (family == AddressFamily::kIpv4 ? "IPv4" : "IPv6") +
                  " address (LOOM_SOCKET_FAMILY=" + addressFamilyName(family) + ")";
    fail(loomInvalidArgument, sentence + ": " + gai_strerror(rc));
  }
  // The resolver may sort IPv6 first; Loom takes IPv4 first, as it does for
  // interfaces, so that one name means one family on every host.
  const addrinfo* chosen = nullptr;
  for (const addrinfo* it = found; it != nullptr && chosen == nullptr; it = it->ai_next)
    if (it->ai_family == AF_INET) chosen = it;
  for (const addrinfo* it = found; it != nullptr && chosen == nullptr; it = it->ai_next)
    if (it->ai_family == AF_INET6) chosen = it;
  if (chosen == nullptr) {
    freeaddrinfo(found);
    fail(loomInvalidArgument, named + " resolves to no IPv4 or IPv6 address");
  }
  uint16_t ignoredPort = 0;
  const IpAddress result = fromSockaddr(chosen->ai_addr, &ignoredPort);
  freeaddrinfo(found);
  if (result.isLinkLocalIpv6() && result.scopeId == 0)
    fail(loomInvalidArgument, named + " resolves to the link-local IPv6 address " + result.toString() +
                                  ", which means nothing without its interface; give a global address");
  return result;
}

socklen_t toSockaddr(const IpAddress& address, uint16_t port, sockaddr_storage* out) {
  std::memset(out, 0, sizeof(*out));
  if (address.family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(out);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    std::memcpy(&v4->sin_addr, address.bytes.data(), 4);
    return sizeof(sockaddr_in);
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(out);
  v6->sin6_family = AF_INET6;
  v6->sin6_port = htons(port);
  std::memcpy(&v6->sin6_addr, address.bytes.data(), 16);
  v6->sin6_scope_id = address.scopeId;
  return sizeof(sockaddr_in6);
}

IpAddress fromSockaddr(const sockaddr* address, uint16_t* port) {
  IpAddress result;
  if (address->sa_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(address);
    result = IpAddress::ipv4(v4->sin_addr.s_addr);
    *port = ntohs(v4->sin_port);
    return result;
  }
  if (address->sa_family != AF_INET6) fail(loomInternalError, "a socket address that is neither IPv4 nor IPv6");
  const auto* v6 = reinterpret_cast<const sockaddr_in6*>(address);
  result.family = AF_INET6;
  std::memcpy(result.bytes.data(), &v6->sin6_addr, 16);
  result.scopeId = v6->sin6_scope_id;
  *port = ntohs(v6->sin6_port);
  return result;
}

}  // namespace loom::bootstrap

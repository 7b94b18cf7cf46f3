#include "bootstrap/unique_id.h"

#include <openssl/sha.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>

#include "base/error.h"
#include "bootstrap/auth.h"

namespace loom::bootstrap {
namespace {

constexpr uint32_t kMagic = 0x4d4f4f4c;  // "LOOM" in little-endian memory
// 1 held an IPv4 address only; 2 holds either family.
constexpr uint32_t kFormat = 2;
// The family as a number of its own: AF_INET6's value differs between systems.
constexpr uint8_t kIpv4 = 4;
constexpr uint8_t kIpv6 = 6;

struct IdFields {
  uint32_t magic;
  uint32_t format;
  uint8_t family;  // kIpv4 or kIpv6
  uint8_t reserved;
  uint16_t port;
  uint32_t scopeId;     // an IPv6 link-local address's interface on the id's host; else 0
  uint8_t address[16];  // network order; IPv4 in the first 4, the rest 0
  Secret secret;
};
static_assert(sizeof(IdFields) <= sizeof(loomUniqueId));

[[noreturn]] void corrupt(const std::string& why) {
  fail(loomInvalidArgument, "the loomUniqueId " + why + ": it is corrupt");
}

}  // namespace

loomUniqueId encodeUniqueId(const RendezvousAddress& address) {
  IdFields fields{};
  fields.magic = kMagic;
  fields.format = kFormat;
  fields.family = address.endpoint.address.isIpv6() ? kIpv6 : kIpv4;
  fields.port = address.endpoint.port;
  fields.scopeId = address.endpoint.address.isIpv6() ? address.endpoint.address.scopeId : 0;
  std::memcpy(fields.address, address.endpoint.address.bytes.data(), address.endpoint.address.isIpv6() ? 16 : 4);
  fields.secret = address.secret;
  loomUniqueId id;
  std::memset(&id, 0, sizeof(id));
  std::memcpy(id.internal, &fields, sizeof(fields));
  return id;
}

RendezvousAddress decodeUniqueId(const loomUniqueId& id) {
  IdFields fields;
  std::memcpy(&fields, id.internal, sizeof(fields));
  if (fields.magic != kMagic || fields.format != kFormat)
    fail(loomInvalidArgument,
         "the loomUniqueId was not made by loomGetUniqueId of this Loom version "
         "(was it copied whole, all 128 bytes, from the rank that created it?)");
  if (fields.family != kIpv4 && fields.family != kIpv6)
    corrupt("holds address family " + std::to_string(fields.family) + ", neither IPv4 nor IPv6");
  if (fields.reserved != 0) corrupt("has a reserved byte set");
  if (fields.port == 0) corrupt("holds port 0");
  IpAddress address;
  address.family = fields.family == kIpv6 ? AF_INET6 : AF_INET;
  std::memcpy(address.bytes.data(), fields.address, sizeof(fields.address));
  if (fields.family == kIpv4) {
    for (size_t i = 4; i < sizeof(fields.address); ++i)
      if (fields.address[i] != 0) corrupt("holds an IPv4 address with bytes beyond its four");
    if (fields.scopeId != 0) corrupt("holds an IPv4 address with an IPv6 scope");
  }
  address.scopeId = fields.scopeId;
  return RendezvousAddress{Endpoint{address, fields.port}, fields.secret};
}

Secret randomSecret() {
  Secret secret{};
  size_t filled = 0;
  while (filled < secret.size()) {
    ssize_t n = getrandom(secret.data() + filled, secret.size() - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failSystem("getrandom", errno);
    filled += static_cast<size_t>(n);
  }
  return secret;
}

Secret secretFromText(const std::string& text) {
  initialiseCrypto();
  unsigned char digest[SHA256_DIGEST_LENGTH];
  std::string salted = "loom-bootstrap-secret:" + text;
  SHA256(reinterpret_cast<const unsigned char*>(salted.data()), salted.size(), digest);
  Secret secret{};
  std::memcpy(secret.data(), digest, secret.size());
  return secret;
}

}  // namespace loom::bootstrap

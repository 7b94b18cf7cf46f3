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
constexpr uint32_t kFormat = 1;

struct IdFields {
  uint32_t magic;
  uint32_t format;
  uint32_t ipv4;
  uint16_t port;
  uint16_t reserved;
  Secret secret;
};
static_assert(sizeof(IdFields) <= sizeof(loomUniqueId));

}  // namespace

loomUniqueId encodeUniqueId(const RendezvousAddress& address) {
  IdFields fields{kMagic, kFormat, address.endpoint.ipv4, address.endpoint.port, 0, address.secret};
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
  if (fields.port == 0) fail(loomInvalidArgument, "the loomUniqueId holds port 0: it is corrupt");
  return RendezvousAddress{Endpoint{fields.ipv4, fields.port}, fields.secret};
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

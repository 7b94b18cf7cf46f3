#include "transport/identity.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "base/error.h"

namespace loom {

namespace {

// LOOM_HOST_ID names the host instead of hostname and boot id: for
// containers that share a kernel but should not share memory, and for tests
// that make several hosts of one machine. Printable, no '/' or newline (the
// encoding's separators), at most 200 bytes.
std::string hostIdFromEnvironment() {
  const char* value = std::getenv("LOOM_HOST_ID");
  if (value == nullptr || value[0] == '\0') return {};
  const std::string id(value);
  if (id.size() > 200)
    fail(loomInvalidArgument, "LOOM_HOST_ID is " + std::to_string(id.size()) + " bytes long; at most 200 are allowed");
  for (const char c : id)
    if (c < 0x21 || c > 0x7e || c == '/')
      fail(loomInvalidArgument,
           "LOOM_HOST_ID='" + id + "' has a character other than printable ASCII without spaces or '/'");
  return id;
}

}  // namespace

RankIdentity RankIdentity::mine(const topo::RankPlacement& place) {
  if (std::string id = hostIdFromEnvironment(); !id.empty()) return RankIdentity{id, getpid(), place};
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  std::string bootId;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> bootId;
  return RankIdentity{std::string(name) + "/" + bootId, getpid(), place};
}

// "host\npid\n", then the placement's bytes.
std::string RankIdentity::encode() const {
  return host + "\n" + std::to_string(pid) + "\n" + std::string(reinterpret_cast<const char*>(&place), sizeof(place));
}

RankIdentity RankIdentity::decode(const std::string& text, int rank) {
  auto malformed = [&]() {
    fail(loomRemoteError, "rank " + std::to_string(rank) + " sent a malformed identity at init (" +
                              std::to_string(text.size()) + " bytes; is every rank running the same Loom?)");
  };
  if (text.size() <= sizeof(topo::RankPlacement) || text[text.size() - sizeof(topo::RankPlacement) - 1] != '\n')
    malformed();
  const std::string head = text.substr(0, text.size() - sizeof(topo::RankPlacement) - 1);
  RankIdentity identity;
  size_t newline = head.rfind('\n');
  char* end = nullptr;
  long pid = newline == std::string::npos ? 0 : std::strtol(head.c_str() + newline + 1, &end, 10);
  if (newline == std::string::npos || end == nullptr || *end != '\0' || pid <= 0) malformed();
  identity.host = head.substr(0, newline);
  identity.pid = static_cast<pid_t>(pid);
  std::memcpy(&identity.place, text.data() + head.size() + 1, sizeof(identity.place));
  identity.place.host[sizeof(identity.place.host) - 1] = '\0';
  identity.place.nic[sizeof(identity.place.nic) - 1] = '\0';
  return identity;
}

}  // namespace loom

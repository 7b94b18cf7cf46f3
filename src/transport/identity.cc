#include "transport/identity.h"

#include <unistd.h>

#include <cstdlib>
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

RankIdentity RankIdentity::mine() {
  if (std::string id = hostIdFromEnvironment(); !id.empty()) return RankIdentity{id, getpid()};
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  std::string bootId;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> bootId;
  return RankIdentity{std::string(name) + "/" + bootId, getpid()};
}

std::string RankIdentity::encode() const {
  return host + "\n" + std::to_string(pid);
}

RankIdentity RankIdentity::decode(const std::string& text, int rank) {
  RankIdentity identity;
  size_t newline = text.rfind('\n');
  char* end = nullptr;
  long pid = newline == std::string::npos ? 0 : std::strtol(text.c_str() + newline + 1, &end, 10);
  if (newline == std::string::npos || end == nullptr || *end != '\0' || pid <= 0)
    fail(loomRemoteError, "rank " + std::to_string(rank) + " sent a malformed identity at init");
  identity.host = text.substr(0, newline);
  identity.pid = static_cast<pid_t>(pid);
  return identity;
}

}  // namespace loom

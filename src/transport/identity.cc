#include "transport/identity.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "base/error.h"

namespace loom {

RankIdentity RankIdentity::mine() {
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

#include "rank_environment.h"

#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <string_view>
#include <utility>

#include "messages.h"

extern char** environ;

namespace loom::tools::loomrun {

std::string pickFreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throwErrno("cannot open a socket to find a free port");
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    throwErrno("cannot find a free port on 127.0.0.1");
  }
  ::close(fd);
  return std::to_string(ntohs(address.sin_port));
}

std::string makeSecret() {
  unsigned char bytes[16];
  std::size_t filled = 0;
  while (filled < sizeof(bytes)) {
    const ssize_t got = ::getrandom(bytes + filled, sizeof(bytes) - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throwErrno("cannot read random bytes for LOOM_SECRET");
    }
    filled += static_cast<std::size_t>(got);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string secret;
  for (const unsigned char byte : bytes) {
    secret += kHex[byte >> 4];
    secret += kHex[byte & 0xf];
  }
  return secret;
}

JobEnvironment makeJobEnvironment(const Options& options) {
  JobEnvironment job;
  job.localWorldSize = options.ranks;
  job.firstRank = options.firstRank;
  job.worldSize = options.worldSize;
  job.nnodes = options.nnodes;
  job.nodeRank = options.nodeRank;
  job.masterAddr = options.masterAddr;
  if (options.nnodes == 1) {
    // Nobody else has to agree on the port or the secret.
    job.masterPort = options.masterPort ? std::to_string(*options.masterPort) : pickFreePort();
    job.secret = makeSecret();
  } else {
    // Every node must arrive at the same values without talking: the port
    // defaults to torchrun's, and the secret is the one every node's
    // environment was given, or none (then Loom derives it from
    // MASTER_ADDR:MASTER_PORT, as every node can).
    job.masterPort = std::to_string(options.masterPort.value_or(kDefaultMasterPort));
    const char* secret = std::getenv("LOOM_SECRET");
    job.secret = secret != nullptr ? secret : "";
  }
  return job;
}

int globalRank(const JobEnvironment& job, int localRank) {
  return job.firstRank + localRank;
}

std::vector<std::string> rankEnvironment(const JobEnvironment& job, int localRank) {
  const int rank = globalRank(job, localRank);
  const int worldSize = job.worldSize;
  // ROLE_* as torchrun sets them for its single role.
  std::vector<std::pair<std::string, std::string>> overrides = {
      {"RANK", std::to_string(rank)},
      {"WORLD_SIZE", std::to_string(worldSize)},
      {"LOCAL_RANK", std::to_string(localRank)},
      {"LOCAL_WORLD_SIZE", std::to_string(job.localWorldSize)},
      {"GROUP_RANK", std::to_string(job.nodeRank)},
      {"GROUP_WORLD_SIZE", std::to_string(job.nnodes)},
      {"ROLE_RANK", std::to_string(rank)},
      {"ROLE_WORLD_SIZE", std::to_string(worldSize)},
      {"MASTER_ADDR", job.masterAddr},
      {"MASTER_PORT", job.masterPort},
  };
  // LOOM_SECRET is always the job's: set as above, or removed when the job
  // has none (an inherited empty one would mean the same to Loom).
  if (!job.secret.empty()) overrides.emplace_back("LOOM_SECRET", job.secret);
  auto isOverridden = [&](std::string_view entry) {
    auto named = [&](std::string_view name) {
      return entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=';
    };
    if (named("LOOM_SECRET")) return true;
    for (const auto& [name, value] : overrides) {
      if (named(name)) return true;
    }
    return false;
  };

  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!isOverridden(*entry)) environment.emplace_back(*entry);
  }
  for (const auto& [name, value] : overrides) environment.push_back(name + "=" + value);
  return environment;
}

}  // namespace loom::tools::loomrun

#include "rank_environment.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include "messages.h"

extern char** environ;

namespace loom::tools::loomrun {

namespace {

// One place a port may be probed: an address (port 0) and how to name it.
struct ProbeAddress {
  sockaddr_storage address{};
  socklen_t length = 0;
  std::string name;  // "127.0.0.1", "[2001:2::1]", "every IPv6 address"
};

ProbeAddress wildcard(int family) {
  ProbeAddress probe;
  probe.address.ss_family = static_cast<sa_family_t>(family);
  if (family == AF_INET6) {
    reinterpret_cast<sockaddr_in6*>(&probe.address)->sin6_addr = in6addr_any;
    probe.length = sizeof(sockaddr_in6);
    probe.name = "every IPv6 address";
  } else {
    reinterpret_cast<sockaddr_in*>(&probe.address)->sin_addr.s_addr = htonl(INADDR_ANY);
    probe.length = sizeof(sockaddr_in);
    probe.name = "every IPv4 address";
  }
  return probe;
}

// The address rank 0 will listen on, as Loom reads MASTER_ADDR (its
// resolveAddress): a number as written, IPv6 in brackets or not and with a
// %interface if link-local; a host name in LOOM_SOCKET_FAMILY's family, for
// none IPv4 first. Nothing when it does not resolve (the ranks then refuse
// it, saying why).
std::optional<ProbeAddress> masterAddress(const std::string& masterAddr) {
  std::string host = masterAddr;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host.pop_back();
    host.erase(0, 1);
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) {
    const char* family = std::getenv("LOOM_SOCKET_FAMILY");
    const std::string_view wanted = family != nullptr ? family : "";
    hints.ai_flags = 0;
    hints.ai_family = wanted == "AF_INET" ? AF_INET : wanted == "AF_INET6" ? AF_INET6 : AF_UNSPEC;
    if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return std::nullopt;
  }
  const addrinfo* chosen = nullptr;
  for (const int family : {AF_INET, AF_INET6})
    for (const addrinfo* it = found; it != nullptr && chosen == nullptr; it = it->ai_next)
      if (it->ai_family == family) chosen = it;
  std::optional<ProbeAddress> probe;
  if (chosen != nullptr && chosen->ai_addrlen <= sizeof(sockaddr_storage)) {
    probe.emplace();
    std::memcpy(&probe->address, chosen->ai_addr, chosen->ai_addrlen);
    probe->length = chosen->ai_addrlen;
    char text[INET6_ADDRSTRLEN] = {};
    const void* bytes =
        chosen->ai_family == AF_INET6
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in6*>(chosen->ai_addr)->sin6_addr)
            : static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(chosen->ai_addr)->sin_addr);
    ::inet_ntop(chosen->ai_family, bytes, text, sizeof(text));
    probe->name = text;
    if (chosen->ai_family == AF_INET6) probe->name.insert(0, 1, '[').push_back(']');
  }
  ::freeaddrinfo(found);
  return probe;
}

// Binds port 0 at `probe`; the port the kernel gave, or 0 with errno set.
int boundPort(const ProbeAddress& probe) {
  const int fd = ::socket(probe.address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_storage bound = probe.address;
  socklen_t length = sizeof(bound);
  int port = 0;
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&probe.address), probe.length) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) == 0)
    port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                                             : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return port;
}

}  // namespace

std::string pickFreePort(const std::string& masterAddr) {
  // Where rank 0 listens: MASTER_ADDR itself when it is this host's; else
  // (behind NAT, with LOOM_SOCKET_IFNAME) an address of its family, which a
  // port free on all of them covers. A port free on 127.0.0.1 says nothing
  // of ::1, and on a host without IPv4 there is no 127.0.0.1 to probe.
  std::vector<ProbeAddress> probes;
  if (std::optional<ProbeAddress> master = masterAddress(masterAddr)) {
    probes.push_back(*master);
    probes.push_back(wildcard(master->address.ss_family));
  } else {
    probes.push_back(wildcard(AF_INET));
    probes.push_back(wildcard(AF_INET6));
  }
  for (const ProbeAddress& probe : probes) {
    if (const int port = boundPort(probe); port != 0) return std::to_string(port);
    // Not an address of this host: the next probe, of its family, decides.
    if (errno != EADDRNOTAVAIL && errno != EAFNOSUPPORT) throwErrno("cannot find a free port on " + probe.name);
  }
  throwErrno("cannot find a free port on " + probes.back().name);
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
    job.masterPort = options.masterPort ? std::to_string(*options.masterPort) : pickFreePort(options.masterAddr);
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

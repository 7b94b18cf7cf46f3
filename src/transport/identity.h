// What ranks tell each other at init so that the transport registry can
// decide how each pair connects, and the communicator can place the ranks:
// which host a rank runs on, its process, and where in the host it runs.
// Every rank receives every identity and decides alike for every pair.
#pragma once

#include <sys/types.h>

#include <string>

#include "topology/placement.h"

namespace loom {

struct RankIdentity {
  std::string host;  // LOOM_HOST_ID, else hostname plus boot id (two containers may share a name)
  pid_t pid = 0;
  // Its socket, NUMA node, CPU binding and nearest NIC (its own `host` is
  // the hostname alone).
  topo::RankPlacement place{};

  // This process's identity, running at `place`. Throws
  // loomInvalidArgument for a malformed LOOM_HOST_ID.
  static RankIdentity mine(const topo::RankPlacement& place = {});
  std::string encode() const;
  // Throws loomRemoteError naming `rank` if `text` is not an encoded identity.
  static RankIdentity decode(const std::string& text, int rank);
  // The hostname alone, for sentences.
  std::string hostName() const { return host.substr(0, host.find('/')); }
};

}  // namespace loom

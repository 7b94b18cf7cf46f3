// What ranks tell each other at init so that the transport registry can
// decide how each pair connects, and the communicator can place the ranks:
// which host a rank runs on, its process, where in the host it runs, and
// the devices its host has.
// Every rank receives every identity and decides alike for every pair.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "topology/placement.h"
#include "topology/topology.h"

namespace loom {

// A device of the rank's host that a transport kind may use to reach a
// peer: a GPU, or a NIC port and the network it is on. Kinds decide
// canConnect from them (an RDMA kind: a port on both ranks' fabric).
struct DeviceIdentity {
  enum class Kind { kGpu, kNic };
  Kind kind = Kind::kNic;
  std::string name;     // "GPU0"; a NIC port by its device name: "mlx5_0", "eth0"
  std::string busId;    // PCI bus id ("0000:17:00.0"); empty when unknown
  int numa = -1;        // NUMA node (OS index) the device hangs off; -1 unknown
  std::string fabric;   // NIC: "rdma" (an OpenFabrics device) or "ip"; GPU: empty
  std::string address;  // NIC: its GUID when the topology has one; GPU: its model; may be empty

  bool operator==(const DeviceIdentity&) const = default;
};

// The GPUs and NIC ports of a host's topology, in the topology's order.
std::vector<DeviceIdentity> devicesOf(const topo::Topology& topology);

struct RankIdentity {
  std::string host;  // LOOM_HOST_ID, else hostname plus boot id (two containers may share a name)
  pid_t pid = 0;
  // Its socket, NUMA node, CPU binding and nearest NIC (its own `host` is
  // the hostname alone).
  topo::RankPlacement place{};
  std::vector<DeviceIdentity> devices;  // of its host (devicesOf)

  // This process's identity, running at `place` on a host with `devices`.
  // Throws loomInvalidArgument for a malformed LOOM_HOST_ID.
  static RankIdentity mine(const topo::RankPlacement& place = {}, std::vector<DeviceIdentity> devices = {});
  std::string encode() const;
  // Throws loomRemoteError naming `rank` if `text` is not an encoded identity.
  static RankIdentity decode(const std::string& text, int rank);
  // The hostname alone, for sentences.
  std::string hostName() const { return host.substr(0, host.find('/')); }
};

}  // namespace loom

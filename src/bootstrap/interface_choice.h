// Which interface's address this host offers to others (in unique ids, and
// where TCP listens), as NCCL chooses its socket interface:
//   LOOM_SOCKET_IFNAME set: the first interface its list selects;
//   unset: the first whose name starts with ib, else, when the rendezvous's
//   address is known and is not loopback, the first with an address on the
//   same subnet as it (NCCL's step for NCCL_COMM_ID: on a host with a
//   management eth0 and a data eth1, the NIC that reaches the master),
//   else the first that is not docker*, lo* or virbr*, else docker*, else
//   lo*, else virbr*;
// "first" in the system's interface order, IPv4 addresses before IPv6 ones
// unless LOOM_SOCKET_FAMILY names one family. Pure, so every rule has a unit
// test; host_interfaces.h feeds it the real interfaces.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bootstrap/interface_list.h"
#include "bootstrap/ip_address.h"

namespace loom::bootstrap {

// What the user asked for. Both variables are read and checked in
// src/core/config.cc (socketRequest()).
struct InterfaceRequest {
  std::optional<InterfaceList> list;           // LOOM_SOCKET_IFNAME; none: the default order
  AddressFamily family = AddressFamily::kAny;  // LOOM_SOCKET_FAMILY
  // "LOOM_SOCKET_IFNAME='^lo', LOOM_SOCKET_FAMILY=AF_INET6": what decided, for log lines.
  std::string describe() const;
};

// One address of an interface, with its netmask as a prefix length.
struct InterfaceAddress {
  IpAddress address;
  int prefixLength = 0;  // 24 for 255.255.255.0; 0 to 32 (IPv4) or 128 (IPv6)
  // Whether `other` is of the same family and agrees in the first
  // prefixLength bits: on this address's subnet.
  bool sameSubnet(const IpAddress& other) const;
};

// An interface that is up, with its addresses in the system's order.
struct HostInterface {
  std::string name;
  std::vector<InterfaceAddress> addresses;
};

struct ChosenInterface {
  std::string name;
  IpAddress address;
  // What decided, for log lines: "LOOM_SOCKET_IFNAME unset", or "same
  // subnet as the rendezvous 198.18.0.1, LOOM_SOCKET_IFNAME unset".
  std::string why;
  // NCCL's way of writing it in its "Using" lines: eth0:198.18.0.1<port>.
  std::string toString(uint16_t port) const;
};

// Link-local IPv6 addresses (fe80::/10) are never chosen: another host
// would need its own interface to reach one, which an address sent in a
// unique id cannot say. Loopback's ::1 is, as the last resort (NCCL skips
// it, leaving AF_INET6 jobs of one host nothing). Throws loomInvalidArgument
// when nothing qualifies, naming the variables, their values and every
// interface that is up with its addresses. `rendezvous`: the address of
// the rendezvous this rank meets the others at, where one is known
// (MASTER_ADDR, a unique id's endpoint); none for the rendezvous's own host
// before it listens (loomGetUniqueId).
ChosenInterface chooseInterface(const std::vector<HostInterface>& up, const InterfaceRequest& request,
                                const std::optional<IpAddress>& rendezvous = std::nullopt);

}  // namespace loom::bootstrap

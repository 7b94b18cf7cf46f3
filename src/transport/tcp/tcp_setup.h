// Connecting a rank to its TCP peers at init. Every rank with TCP peers
// listens on its interface's address and shares address, port, a fresh
// token, its sockets per peer and its link's rate in one rendezvous round
// (ranks without TCP peers join the round with nothing); then each rank connects to the peers above it and accepts
// the peers below it. A connection proves itself with the listener's token,
// which only the communicator's ranks learned (the rendezvous admitted them
// by the secret), so a stranger on the port is dropped, never taken for a
// rank.
#pragma once

#include <string>
#include <vector>

#include "bootstrap/socket.h"
#include "transport/registry.h"

namespace loom::tcp {

// What connecting learned of the links: the interface this rank listens
// on (LOOM_SOCKET_IFNAME's choice), and the rates of all the ranks' with
// TCP peers, as each one's kernel gives its interface's
// (bootstrap/link_rate.h); every rank learns the same.
struct TcpLinks {
  std::string interfaceName;
  NetworkRate slowest;
};

// The slowest of the ranks' links, by rank: each one's rate in Mbit/s, 0
// where its kernel gives none, -1 for a rank without TCP peers.
NetworkRate slowestLink(const std::vector<int64_t>& linkMbps);

// sockets[peer index][channel * n + i] for the peers in setup.peers, in
// that order; connected, with TCP_NODELAY. Throws naming the rank that did
// not connect, or what was wrong with its entry.
std::vector<std::vector<bootstrap::Socket>> connectPeers(const TransportSetup& setup, TcpLinks* links);

}  // namespace loom::tcp

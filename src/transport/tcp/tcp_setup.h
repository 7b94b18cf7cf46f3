// Connecting a rank to its TCP peers at init. Every rank with TCP peers
// listens on its interface's address and shares address, port and a fresh
// token in one rendezvous round (ranks without TCP peers join the round
// with nothing); then each rank connects to the peers above it and accepts
// the peers below it. A connection proves itself with the listener's token,
// which only the communicator's ranks learned (the rendezvous admitted them
// by the secret), so a stranger on the port is dropped, never taken for a
// rank.
#pragma once

#include <vector>

#include "bootstrap/socket.h"
#include "transport/registry.h"

namespace loom::tcp {

// sockets[peer index][channel * n + i] for the peers in setup.peers, in
// that order; connected, with TCP_NODELAY. *interfaceName: the interface
// this rank listens on (LOOM_SOCKET_IFNAME's choice). Throws naming the rank
// that did not connect, or what was wrong with its entry.
std::vector<std::vector<bootstrap::Socket>> connectPeers(const TransportSetup& setup, std::string* interfaceName);

}  // namespace loom::tcp

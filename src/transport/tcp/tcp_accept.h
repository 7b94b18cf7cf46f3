// Accepting the TCP connections of the ranks below this one at init. Every
// connection that arrives is judged side by side with the others, each with
// a few seconds of its own to send its hello (tcp_hello.h): a stranger on
// the port (a port scanner, a rank of an earlier job that is still trying)
// is dropped with a WARN that says where it came from and why, and delays
// no rank's connections. Only the init timeout ends the wait, naming the
// ranks whose connections did not all arrive.
#pragma once

#include <cstdint>
#include <vector>

#include "base/deadline.h"
#include "bootstrap/socket.h"
#include "bootstrap/unique_id.h"

namespace loom::tcp {

struct ExpectedConnections {
  int rank = 0;               // this rank, for sentences
  int64_t timeoutMs = 0;      // the init timeout, for sentences
  bootstrap::Secret token{};  // what every connection must prove
  std::vector<int> peers;     // the ranks that connect to this one
  int socketsPerPeer = 0;     // connections from each of them
  int64_t helloMs = 5000;     // how long one connection may take to greet
};

// result[i][s]: socket s of expected.peers[i], its hello read. `listener`
// is made non-blocking. Throws loomTimeout at the deadline naming the ranks
// still missing, or loomSystemError when this rank cannot accept at all
// (no file descriptors left).
std::vector<std::vector<bootstrap::Socket>> acceptPeers(int listener, const ExpectedConnections& expected,
                                                        const Deadline& deadline);

}  // namespace loom::tcp

// Admission to a rendezvous: every connection is handled at once, by one
// poll loop, and only a connection that proves the secret becomes a rank. A
// connection that never speaks, speaks slowly or speaks garbage costs one
// slot until its own short deadline, never the real ranks' time; a refused
// peer is told why before the connection closes, and the rendezvous logs
// who it refused and why.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bootstrap/socket.h"
#include "bootstrap/unique_id.h"

namespace loom::bootstrap {

struct AdmissionLimits {
  // From accept to a whole hello. A rank sends its hello as soon as it reads
  // the greeting, so only a stalled or hostile peer takes this long; a rank
  // dropped for it connects again.
  int64_t helloMs = 5000;
  // Connections still to prove the secret. A newcomer beyond this drops the
  // oldest (a rank among them connects again), so a flood can neither use up
  // the process's file descriptors nor lock the ranks out.
  size_t maxWaiting = 128;
};

// The ranks a rendezvous admitted.
struct AdmittedRanks {
  std::vector<Socket> sockets;      // indexed by rank; invalid for a rank that never joined
  std::vector<int64_t> timeoutsMs;  // each joined rank's timeout, from its hello
  std::string missing;              // why not every rank joined; empty when all did
};

// Admits the ranks of one communicator from `listener` (which it makes
// non-blocking); the first rank's hello sets their number. Returns once
// every rank is in, or, with `missing` saying which ranks are not, when the
// first admitted rank's own timeout runs out (it would give up then) or
// when none came within waitForRanksMs. `where` names this rendezvous ("the
// rendezvous at 10.0.0.1:29500") in what peers are told and what is logged.
AdmittedRanks admitRanks(int listener, const Secret& secret, int64_t waitForRanksMs, const AdmissionLimits& limits,
                         const std::string& where);

}  // namespace loom::bootstrap

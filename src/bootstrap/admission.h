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

// Admits the ranks of one communicator from `listener` (which it makes
// non-blocking); the first rank's hello sets their number. Returns one
// socket per rank, indexed by rank, once every rank is in, or an empty
// vector when they were not all in within waitForRanksMs. `where` names
// this rendezvous ("the rendezvous at 10.0.0.1:29500") in what peers are
// told and what is logged.
std::vector<Socket> admitRanks(int listener, const Secret& secret, int64_t waitForRanksMs,
                               const AdmissionLimits& limits, const std::string& where);

}  // namespace loom::bootstrap

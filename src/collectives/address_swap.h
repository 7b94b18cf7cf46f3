// The first step of every single-copy algorithm (direct.h, registered.h):
// ranks swap the addresses of this call's buffers, and the call itself, so
// mismatched arguments fail here, with both calls named, before any rank
// touches a peer's buffer.
#pragma once

#include <vector>

#include "collectives/collectives.h"

namespace loom {

// One rank's buffers for this collective, as addresses in that rank's process.
struct PeerBuffers {
  const char* send = nullptr;
  char* recv = nullptr;
};

// all[r] is rank r's buffers. Returning means every rank has entered the call.
Task<std::vector<PeerBuffers>> swapAddresses(const Team& team, const CollectiveArgs& args, const WaitContext& wait);

}  // namespace loom

// A rank's connections to every peer, whatever carries them.
#pragma once

#include <cstdint>
#include <string>

#include "transport/collective_call.h"
#include "transport/connection.h"
#include "transport/peer_memory.h"

namespace loom {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual SendConnection& sendTo(int peer) = 0;
  virtual RecvConnection& recvFrom(int peer) = 0;

  // The arrival board: each rank announces the collective it starts (its
  // number, and the call's arguments), so a rank left waiting can say which
  // peers never arrived, or called something else.
  virtual void announceCollectiveStarted(const CollectiveCall& call) = 0;
  // -1 when this transport cannot see the peer's count.
  virtual int64_t collectivesStartedBy(int peer) const = 0;
  // Tells every peer this rank failed, so they stop waiting for it.
  virtual void announceFailure(const std::string& sentence) = 0;
  // Single-copy reads of peers' buffers; null unless every rank of the
  // communicator can read every other's (decided together at init).
  virtual const PeerMemory* peerMemory() const = 0;
};

}  // namespace loom

// A rank's connections to every peer, whatever carries them.
#pragma once

#include <cstdint>
#include <string>

#include "transport/connection.h"

namespace loom {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual SendConnection& sendTo(int peer) = 0;
  virtual RecvConnection& recvFrom(int peer) = 0;

  // The arrival board: each rank announces how many collectives it has
  // started, so a timed-out rank can say which peers never arrived.
  virtual void announceCollectiveStarted(uint64_t collectives) = 0;
  // -1 when this transport cannot see the peer's count.
  virtual int64_t collectivesStartedBy(int peer) const = 0;
  // Tells every peer this rank failed, so they stop waiting for it.
  virtual void announceFailure(const std::string& sentence) = 0;
};

}  // namespace loom

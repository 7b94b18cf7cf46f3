// Where a rank's engine sleeps when none of its operations can move, put
// together from what the transport kinds that carry its peers offer
// (Transport::progressBy, Waitable::pollFd):
// - the doorbell its peers ring when they post to this rank or free its
//   slots (shm keeps it in the status page its peers map), which a
//   transport's own thread rings too when a watched connection moves;
// - descriptors that turn readable when a waiting side can move (a socket;
//   a completion channel), lent by transports that move data on a thread
//   of their own.
// The engine arms, looks at its waits once more, then sleeps here, and
// never knows which kinds are behind them.
#pragma once

#include <poll.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "base/doorbell.h"
#include "base/wakeup.h"
#include "transport/connection.h"

namespace loom {

class Transport;

class IdleSleep {
 public:
  // `lenders`: the transports whose waits may lend descriptors (they move
  // data on a thread of their own); none: the engine always sleeps on the
  // doorbell.
  IdleSleep(Doorbell& doorbell, std::vector<Transport*> lenders);
  explicit IdleSleep(Doorbell& doorbell) : IdleSleep(doorbell, {}) {}
  IdleSleep(const IdleSleep&) = delete;
  IdleSleep& operator=(const IdleSleep&) = delete;

  // The sleeper's side, as the doorbell's: arm, look once more, then sleep
  // (or disarm).
  uint32_t arm() { return doorbell_.arm(); }
  void disarm() { doorbell_.disarm(); }
  // Returns after a ring since `armed`, once one of `waits` may move, after
  // `ms`, or spuriously; disarms. In poll when every wait lends a
  // descriptor, so a message wakes the engine itself rather than a
  // transport's thread that then rings; else on the doorbell, with the
  // descriptors handed back to their transports' threads, so that what
  // arrives there still rings it.
  void sleep(uint32_t armed, int64_t ms, const std::vector<Waitable*>& waits);
  // After publishing work a sleeping engine must see (a post, a driver
  // that wants to take over, an abort, a transport thread's news).
  void ring() {
    doorbell_.ring();
    if (wakeup_) wakeup_->wake();
  }
  // The lenders' threads take back the descriptors the engine polled, so
  // they see everything that arrives there (heartbeats, failures) while the
  // engine looks elsewhere: before it asks peers why a wait lasts.
  void returnDescriptors();

 private:
  void sleepInPoll(uint32_t armed, int64_t ms);

  Doorbell& doorbell_;
  std::vector<Transport*> lenders_;
  std::unique_ptr<Wakeup> wakeup_;  // what rings a sleep in poll; only with lenders
  std::vector<pollfd> pollFds_;     // the waits' descriptors, then the wake-up's
  std::vector<Waitable*> pollOn_;   // by pollFds_ index
};

}  // namespace loom

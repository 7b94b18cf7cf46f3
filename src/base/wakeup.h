// A wake-up for a thread that sleeps in poll(): an eventfd it polls with its
// sockets, written only while it sleeps. The engine wakes the TCP progress
// thread with one; an engine asleep in poll on its own sockets
// (Waitable::pollFd) is woken with another by whatever would otherwise only
// ring its doorbell (a post, a driver that wants to take over, an abort,
// the TCP thread's news). Only this process can write it, which is why an
// engine sleeps in poll only while every wait is on such a socket.
//
// As with a doorbell (doorbell.h), the sleeper arms, looks for work once
// more, then polls; the waker publishes its work, then looks whether the
// sleeper is armed, with a full fence on both sides, so no wake-up is lost.
#pragma once

#include <atomic>
#include <cstdint>

namespace loom {

class Wakeup {
 public:
  Wakeup();
  ~Wakeup();
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  int fd() const { return fd_; }
  // After publishing work the thread must see.
  void wake();
  // The thread's side: arm, look for work once more, poll, then disarm
  // and drain.
  void arm();
  void disarm() { sleeping_.store(0, std::memory_order_relaxed); }
  void drain();

 private:
  int fd_;
  std::atomic<uint32_t> sleeping_{0};
};

}  // namespace loom

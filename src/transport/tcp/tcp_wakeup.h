// How the engine wakes the TCP progress thread: an eventfd the thread polls
// with its sockets, written only while the thread sleeps. As with a
// doorbell (base/doorbell.h), the sleeper arms, looks for work once more,
// then polls; the waker publishes its work, then looks whether the sleeper
// is armed, with a full fence on both sides, so no wake-up is lost.
#pragma once

#include <atomic>
#include <cstdint>

namespace loom::tcp {

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

}  // namespace loom::tcp

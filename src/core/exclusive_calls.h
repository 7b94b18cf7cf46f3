// One communicator takes one call at a time. Two threads that issue calls
// on one communicator at once would number them in whichever order they
// happen to arrive, which differs from rank to rank, so the ranks would
// pair up different calls; NCCL and MPI leave that undefined. Loom refuses
// the second call instead, naming both, and a blocking call counts as
// issued until it returns. Different communicators on different threads
// are independent. (Calls from several threads that never overlap are the
// caller's to order the same way on every rank.)
#pragma once

#include <atomic>

namespace loom {

class ExclusiveCalls {
 public:
  class Scope {
   public:
    explicit Scope(ExclusiveCalls* calls) : calls_(calls) {}
    Scope(Scope&& other) noexcept : calls_(other.calls_) { other.calls_ = nullptr; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;
    ~Scope() {
      if (calls_ != nullptr) calls_->leave();
    }

   private:
    ExclusiveCalls* calls_;
  };

  // Enters a call named `name` ("AllReduce") on `rank`; throws
  // loomInvalidUsage naming both calls when another thread is inside one. A thread may enter again
  // while it is inside (the outer scope leaves).
  Scope enter(const char* name, int rank);

 private:
  void leave();

  std::atomic<const void*> thread_{nullptr};  // the calling thread's token, while inside
  std::atomic<const char*> name_{nullptr};    // its call
};

}  // namespace loom

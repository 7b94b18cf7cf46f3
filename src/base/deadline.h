// A point in time after which a wait gives up; "never" for unbounded waits.
#pragma once

#include <chrono>
#include <cstdint>

namespace loom {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;

  // Longer waits (up to INT64_MAX ms) are waits without end: timeouts
  // saturate here instead of overflowing the clock into the past.
  static constexpr int64_t kForeverMs = 100LL * 366 * 24 * 3600 * 1000;  // a century

  // A negative wait has ended already.
  static Deadline afterMs(int64_t ms) {
    if (ms >= kForeverMs) return never();
    return Deadline(Clock::now() + std::chrono::milliseconds(ms < 0 ? 0 : ms));
  }
  static Deadline never() { return Deadline(Clock::time_point::max()); }

  bool isBefore(const Deadline& other) const { return at_ < other.at_; }
  bool expired() const { return at_ != Clock::time_point::max() && Clock::now() >= at_; }
  // Milliseconds left, clamped to [0, cap]: the length of the next sleep slice.
  int64_t remainingMs(int64_t cap) const {
    if (at_ == Clock::time_point::max()) return cap;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
    if (left < 0) return 0;
    return left < cap ? left : cap;
  }

 private:
  explicit Deadline(Clock::time_point at) : at_(at) {}
  Clock::time_point at_;
};

}  // namespace loom

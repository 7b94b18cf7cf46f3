// The last operations of a communicator, kept as PyTorch's flight recorder
// keeps NCCL's: what each was (kind, count, datatype, op, root or peer),
// the algorithm that ran it, when it was posted, started and ended, and how
// it ended. The calling thread and the driving thread write it without
// locks (every field is an atomic, and an entry that a newer operation took
// over is left alone by the older one); a reader may see an entry half
// rewritten, which a diagnostic can afford. It is dumped to the log with
// every failure, and with LOOM_DUMP_ON_SIGNAL=USR1 whenever the process gets
// that signal, without stopping it (signal_dump.h).
//
// Times come from CLOCK_MONOTONIC_COARSE: a few nanoseconds per read on the
// path of every call, at the cost of a resolution of a few milliseconds,
// which is what telling a hang from a slow call needs.
#pragma once

#include <loom/loom.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace loom {

class FlightRecorder {
 public:
  enum class State : int { kPosted, kRunning, kSucceeded, kFailed };

  struct Entry {
    std::atomic<uint64_t> sequence{0};  // 0: never used
    std::atomic<const char*> name{""};
    std::atomic<uint64_t> count{0};
    std::atomic<int> dtype{0}, op{-1}, root{-1}, peer{-1};
    std::atomic<const char*> algorithm{nullptr};  // null until the schedule chose one
    std::atomic<int64_t> postedMs{0}, startedMs{0}, endedMs{0};
    std::atomic<int> state{0};
    std::atomic<int> result{0};
  };

  // entries == 0 keeps nothing: every call below is then a no-op.
  explicit FlightRecorder(size_t entries);

  // When an operation is numbered. `peer` is -1 for collectives.
  Entry* posted(uint64_t sequence, const char* name, uint64_t count, int dtype, int op, int root, int peer);
  // The rest check that the entry still belongs to `sequence`.
  // `atPosting`: it starts in the call that posted it, so its posting time
  // serves (a clock read fewer on every blocking call).
  static void started(Entry* entry, uint64_t sequence, bool atPosting);
  static void ended(Entry* entry, uint64_t sequence, loomResult_t result);

  // One line per operation kept, oldest first, times relative to now.
  std::vector<std::string> describe() const;
  uint64_t operationsSeen() const { return seen_.load(std::memory_order_relaxed); }

 private:
  static int64_t nowMs();

  std::unique_ptr<Entry[]> entries_;
  size_t capacity_;
  size_t nextSlot_ = 0;  // posted()'s, which one thread calls at a time
  std::atomic<uint64_t> seen_{0};
};

}  // namespace loom

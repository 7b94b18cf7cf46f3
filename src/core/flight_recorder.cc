#include "core/flight_recorder.h"

#include <time.h>

#include <algorithm>

namespace loom {
namespace {

const char* stateName(FlightRecorder::State state) {
  switch (state) {
    case FlightRecorder::State::kPosted: return "queued";
    case FlightRecorder::State::kRunning: return "running";
    case FlightRecorder::State::kSucceeded: return "done";
    case FlightRecorder::State::kFailed: return "failed";
  }
  return "?";
}

}  // namespace

FlightRecorder::FlightRecorder(size_t entries)
    : entries_(entries > 0 ? std::make_unique<Entry[]>(entries) : nullptr), capacity_(entries) {}

int64_t FlightRecorder::nowMs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

FlightRecorder::Entry* FlightRecorder::posted(uint64_t sequence, const char* name, uint64_t count, int dtype, int op,
                                              int root, int peer) {
  if (capacity_ == 0) return nullptr;
  // One writer at a time (calls on a communicator do not overlap), so no
  // read-modify-write: this is on every call's path.
  seen_.store(seen_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  Entry& entry = entries_[nextSlot_];  // the oldest (describe() sorts by sequence)
  nextSlot_ = nextSlot_ + 1 == capacity_ ? 0 : nextSlot_ + 1;
  constexpr auto relaxed = std::memory_order_relaxed;
  entry.sequence.store(sequence, relaxed);
  entry.name.store(name, relaxed);
  entry.count.store(count, relaxed);
  entry.dtype.store(dtype, relaxed);
  entry.op.store(op, relaxed);
  entry.root.store(root, relaxed);
  entry.peer.store(peer, relaxed);
  entry.algorithm.store(nullptr, relaxed);
  entry.postedMs.store(nowMs(), relaxed);
  entry.startedMs.store(0, relaxed);
  entry.endedMs.store(0, relaxed);
  entry.state.store(static_cast<int>(State::kPosted), relaxed);
  return &entry;
}

void FlightRecorder::started(Entry* entry, uint64_t sequence, bool atPosting) {
  if (entry == nullptr || entry->sequence.load(std::memory_order_relaxed) != sequence) return;
  entry->startedMs.store(atPosting ? entry->postedMs.load(std::memory_order_relaxed) : nowMs(),
                         std::memory_order_relaxed);
  entry->state.store(static_cast<int>(State::kRunning), std::memory_order_relaxed);
}

void FlightRecorder::ended(Entry* entry, uint64_t sequence, loomResult_t result) {
  if (entry == nullptr || entry->sequence.load(std::memory_order_relaxed) != sequence) return;
  entry->endedMs.store(nowMs(), std::memory_order_relaxed);
  entry->result.store(result, std::memory_order_relaxed);
  entry->state.store(static_cast<int>(result == loomSuccess ? State::kSucceeded : State::kFailed),
                     std::memory_order_relaxed);
}

std::vector<std::string> FlightRecorder::describe() const {
  std::vector<std::string> lines;
  if (capacity_ == 0) return lines;
  const int64_t now = nowMs();
  std::vector<const Entry*> used;
  for (size_t i = 0; i < capacity_; ++i)
    if (entries_[i].sequence.load(std::memory_order_relaxed) != 0) used.push_back(&entries_[i]);
  std::sort(used.begin(), used.end(), [](const Entry* a, const Entry* b) {
    return a->sequence.load(std::memory_order_relaxed) < b->sequence.load(std::memory_order_relaxed);
  });
  for (const Entry* e : used) {
    constexpr auto relaxed = std::memory_order_relaxed;
    const auto state = static_cast<State>(e->state.load(relaxed));
    std::string line = "#";
    line += std::to_string(e->sequence.load(relaxed));
    line += ' ';
    line += e->name.load(relaxed);
    line += " of ";
    line += std::to_string(e->count.load(relaxed));
    line += ' ';
    line += loomTypeName(static_cast<loomDataType_t>(e->dtype.load(relaxed)));
    if (e->op.load(relaxed) >= 0)
      line += std::string(" (") + loomOpName(static_cast<loomRedOp_t>(e->op.load(relaxed))) + ")";
    if (e->root.load(relaxed) >= 0) line += " root " + std::to_string(e->root.load(relaxed));
    if (e->peer.load(relaxed) >= 0) line += " peer " + std::to_string(e->peer.load(relaxed));
    if (const char* algorithm = e->algorithm.load(relaxed)) line += std::string(" [") + algorithm + "]";
    line += std::string(": ") + stateName(state);
    if (state == State::kFailed)
      line += std::string(" (") + loomGetErrorString(static_cast<loomResult_t>(e->result.load(relaxed))) + ")";
    const int64_t posted = e->postedMs.load(relaxed), started = e->startedMs.load(relaxed),
                  ended = e->endedMs.load(relaxed);
    line += ", posted " + std::to_string(now - posted) + " ms ago";
    if (started != 0) line += ", started after " + std::to_string(started - posted) + " ms";
    if (ended != 0 && started != 0) line += ", took " + std::to_string(ended - started) + " ms";
    if (ended == 0 && started != 0) line += ", running for " + std::to_string(now - started) + " ms";
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace loom

// Ranks of one in-memory fabric that the calling thread drives by itself,
// with no engine and no thread per rank: each rank runs a schedule's
// coroutine until it parks on a connection, and sweeps over the ranks
// resume every one whose connection can move, until all have ended. So
// thousands of ranks fit in one process and run the schedules the library
// runs, message for message. With a timeline (transport/mem/mem_timeline.h)
// every message carries the virtual time it would arrive, and the latest
// rank's clock after a call is the call's predicted time.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/task.h"
#include "collectives/collectives.h"
#include "transport/collective_call.h"
#include "transport/mem/mem_fabric.h"

namespace loom::simulate {

struct VirtualLayout {
  std::vector<int> hostOf;  // by rank (hosts numbered from 0 in order of their lowest rank); its size: the ranks
  SlotShape shape{4, 64 * 1024};
  Tuning tuning;
  std::optional<mem::TimelineModel> timeline;  // its hostOf is this layout's
  // At most this many messages in flight at once (0: no limit), so that a
  // schedule too large for the machine fails with a sentence
  // (mem::BufferLimitReached), not by running out of memory.
  size_t maxMessagesInFlight = 0;
};

using Schedule = Task<> (*)(const Team&, const CollectiveArgs&, const WaitContext&);

struct CollectiveRun {
  std::string algorithm;  // what rank 0's schedule noted it ran ("ring"); empty if it noted none
  uint64_t sweeps = 0;    // passes over the ranks until every one ended
};

class VirtualRanks {
 public:
  explicit VirtualRanks(const VirtualLayout& layout);
  ~VirtualRanks();
  VirtualRanks(const VirtualRanks&) = delete;
  VirtualRanks& operator=(const VirtualRanks&) = delete;

  int nranks() const { return static_cast<int>(ranks_.size()); }
  mem::Timeline* timeline() { return fabric_->timeline(); }

  // One collective on every rank, rank r with argsOf(r), each running
  // `schedule` (a schedule of its own, or the selection in plan.cc). Throws
  // loom::Error with the first rank's failure, or naming what every rank
  // still waits for when none can move. A run that threw leaves the ranks
  // out of step: later runs refuse. With a timeline, the times are of one
  // run: a second refuses too (make new ranks for the next call).
  CollectiveRun run(OperationKind kind, Schedule schedule, const std::function<CollectiveArgs(int)>& argsOf);

 private:
  struct Rank;
  CollectiveRun runEveryRank(OperationKind kind, Schedule schedule, const std::function<CollectiveArgs(int)>& argsOf);
  std::string stuck() const;

  std::shared_ptr<mem::Fabric> fabric_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  uint64_t collectives_ = 0;
  std::string unusable_;              // why no further run can go on; empty while one can
  std::atomic<bool> aborted_{false};  // never set: no rank is aborted
};

}  // namespace loom::simulate

#include "simulate/virtual_ranks.h"

#include <string>
#include <utility>

#include "base/error.h"
#include "collectives/p2p_inbox.h"
#include "simulate/in_process_team.h"
#include "transport/connections.h"
#include "transport/mem/mem_transport.h"
#include "transport/message_label.h"
#include "transport/wait_context.h"

namespace loom::simulate {

struct VirtualRanks::Rank {
  std::unique_ptr<Connections> connections;
  PointToPointInboxes inboxes;
  Team team;
  CollectiveCall call;
  WaitContext wait;
  Suspension suspension;
  std::atomic<const char*> algorithm{nullptr};
  Task<> task;
};

VirtualRanks::VirtualRanks(const VirtualLayout& layout) {
  const int nranks = static_cast<int>(layout.hostOf.size());
  if (nranks < 1) fail(loomInvalidArgument, "a simulation needs at least one rank");
  std::unique_ptr<mem::Timeline> timeline;
  if (layout.timeline) {
    mem::TimelineModel model = *layout.timeline;
    model.hostOf = layout.hostOf;
    timeline = std::make_unique<mem::Timeline>(std::move(model));
  }
  mem::Faults faults;
  // Every byte goes through the FIFOs, where the timeline sees it: no
  // schedule reads a peer's buffer in place.
  faults.singleCopy = false;
  fabric_ = std::make_shared<mem::Fabric>(nranks, layout.shape, faults, std::move(timeline));
  if (layout.maxMessagesInFlight != 0)
    fabric_->limitBuffers(layout.maxMessagesInFlight, "the most these virtual ranks may hold");
  ranks_.reserve(nranks);
  for (int r = 0; r < nranks; ++r) {
    auto rank = std::make_unique<Rank>();
    rank->connections = std::make_unique<Connections>(r, nranks, inMemoryKind(), layout.shape,
                                                      std::make_unique<mem::MemTransport>(fabric_, r));
    rank->team = inProcessTeam(r, nranks, layout.hostOf, {}, rank->connections.get(), nullptr, layout.tuning);
    ranks_.push_back(std::move(rank));
  }
}

VirtualRanks::~VirtualRanks() {
  // A failed run leaves coroutines parked: their frames go before the
  // connections they point at.
  for (auto& rank : ranks_) rank->task.reset();
}

CollectiveRun VirtualRanks::run(OperationKind kind, Schedule schedule,
                                const std::function<CollectiveArgs(int)>& argsOf) {
  if (!unusable_.empty()) fail(loomInvalidUsage, "these virtual ranks cannot run again: " + unusable_);
  unusable_ = timeline() != nullptr ? "their timeline holds the times of the run before" : "";
  try {
    return runEveryRank(kind, schedule, argsOf);
  } catch (...) {
    // Parked frames point at this call's arguments: they go now, and the
    // connections they left out of step go unused.
    for (auto& rank : ranks_) rank->task.reset();
    unusable_ = "a run before failed";
    throw;
  }
}

CollectiveRun VirtualRanks::runEveryRank(OperationKind kind, Schedule schedule,
                                         const std::function<CollectiveArgs(int)>& argsOf) {
  ++collectives_;
  std::vector<CollectiveArgs> args(ranks_.size());
  for (int r = 0; r < nranks(); ++r) {
    Rank& rank = *ranks_[r];
    args[r] = argsOf(r);
    rank.call = inProcessCall(collectives_, kind, args[r]);
    rank.wait = {};
    rank.wait.aborted = &aborted_;
    rank.wait.rank = r;
    rank.wait.operation = operationName(kind);
    rank.wait.sequence = collectives_;
    rank.wait.call = &rank.call;
    rank.wait.label = MessageLabel::of(rank.call);
    rank.wait.suspension = &rank.suspension;
    rank.wait.algorithm = &rank.algorithm;
    rank.algorithm.store(nullptr);
    rank.suspension = {};
    rank.connections->announceCollectiveStarted(rank.call);
  }
  // Each rank starts, runs until it parks or ends; then sweeps resume
  // whichever can move. A rank's failure ends the run: the others would
  // wait for it forever.
  auto settle = [&](int r) {
    Rank& rank = *ranks_[r];
    if (!rank.task.done()) {
      if (rank.suspension.on == nullptr)
        fail(loomInternalError, rank.wait.describe() + " stopped without waiting on a connection");
      return;
    }
    if (std::exception_ptr error = rank.task.error()) std::rethrow_exception(error);
  };
  int running = nranks();
  for (int r = 0; r < nranks(); ++r) {
    Rank& rank = *ranks_[r];
    rank.task = schedule(rank.team, args[r], rank.wait);
    rank.task.start();
    settle(r);
    if (rank.task.done()) --running;
  }
  CollectiveRun result;
  while (running > 0) {
    ++result.sweeps;
    bool moved = false;
    for (int r = 0; r < nranks(); ++r) {
      Rank& rank = *ranks_[r];
      if (rank.task.done() || !rank.suspension.on->ready()) continue;
      const std::coroutine_handle<> parked = std::exchange(rank.suspension, {}).handle;
      parked.resume();
      moved = true;
      settle(r);
      if (rank.task.done()) --running;
    }
    if (!moved) fail(loomInternalError, "the simulated " + std::string(operationName(kind)) + " stopped: " + stuck());
  }
  if (const char* algorithm = ranks_[0]->algorithm.load()) result.algorithm = algorithm;
  for (auto& rank : ranks_) rank->task.reset();
  return result;
}

std::string VirtualRanks::stuck() const {
  std::string text;
  int listed = 0;
  for (int r = 0; r < nranks() && listed < 4; ++r) {
    const Rank& rank = *ranks_[r];
    if (rank.task.done() || rank.suspension.on == nullptr) continue;
    text += (listed++ ? "; " : "") + std::string("rank ") + std::to_string(r) + " waits for rank " +
            std::to_string(rank.suspension.on->peer()) + " " + rank.suspension.on->peerMustDo();
  }
  return text.empty() ? "no rank waits on a connection" : text;
}

}  // namespace loom::simulate

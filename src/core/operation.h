// One posted operation as the engine keeps it: what it is, the schedule
// that runs it (a coroutine, base/task.h), where that schedule stopped, and
// the request that reports its end.
#pragma once

#include <loom/loom.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/task.h"
#include "collectives/collectives.h"
#include "collectives/p2p_inbox.h"
#include "core/flight_recorder.h"
#include "core/request.h"
#include "transport/collective_call.h"
#include "transport/message_label.h"
#include "transport/wait_context.h"

namespace loom {

class Engine;

// Which queue an operation waits in. Collectives (and registration) run one
// after another, in call order; each peer's Sends run in posting order, and
// so do its Recvs, so messages between a pair match in posting order, while
// every queue's head progresses independently of the others.
struct Lane {
  enum class Kind { kCollective, kSend, kRecv };
  Kind kind = Kind::kCollective;
  int peer = -1;  // for kSend and kRecv
  int tag = 0;    // for kRecv: Recvs of different tags from one peer run side by side
  // kRecv with peer kAnySource: Recvs from any source, one lane per tag.
  static constexpr int kAnySource = PostedRecvs::kAnySource;

  static Lane collective() { return {}; }
  static Lane sendTo(int peer) { return {Kind::kSend, peer}; }
  static Lane recvFrom(int peer, int tag = 0) { return {Kind::kRecv, peer, tag}; }
  // Tag 0's lanes, by index: 0 for collectives, then one per peer and
  // direction; the engine keeps other tags' lanes, and those of Recvs from
  // any source, apart (tagged()).
  bool tagged() const { return tag != 0 || peer < 0; }
  size_t index(int nranks) const {
    return kind == Kind::kCollective ? 0 : kind == Kind::kSend ? 1 + peer : 1 + nranks + peer;
  }
};

struct Operation {
  explicit Operation(std::weak_ptr<Engine> engine) : request(std::move(engine)) {}

  using Step = Task<> (*)(const Team&, const CollectiveArgs&, const WaitContext&);
  using Body = std::function<Task<>(const Team&, const WaitContext&)>;

  const char* name = "";
  uint64_t sequence = 0;                    // every operation of the communicator
  CollectiveCall call;                      // number 0 for Send/Recv; else the arrival board's number and arguments
  uint64_t messageNumber = 0;               // Send: its message's number among all the pair's
  FlightRecorder::Entry* record = nullptr;  // its line in the communicator's flight recorder
  Lane lane;
  // The schedule: step(team, args, wait) for the collectives and Send/Recv
  // (no allocation), or body for anything else (registration).
  Step step = nullptr;
  CollectiveArgs args;
  Body body;
  Request request;  // outlives the operation's run while a caller's handle holds it (requestOf)

  // Filled in by the engine.
  WaitContext wait;
  Suspension suspension;
  Task<> task;
  bool started = false;
  bool startsAtPosting = false;  // a blocking call runs it at once, on the thread that posted it
  int64_t blockedSinceMs = -1;   // steady clock; -1 while it moves

  bool isCollective() const { return call.number != 0; }

  // Fills `wait` with what every wait of this operation reports and obeys:
  // the operation's name, numbers and label, and its host's limits.
  void prepareWaits(int64_t timeoutMs, const std::atomic<bool>* aborted, int rank, const std::string* commName) {
    wait.timeoutMs = timeoutMs;
    wait.aborted = aborted;
    wait.rank = rank;
    wait.operation = name;
    wait.sequence = sequence;
    wait.call = isCollective() ? &call : nullptr;
    wait.label = isCollective() ? MessageLabel::of(call)
                                : MessageLabel::pointToPoint(messageNumber, args.count, args.dtype, args.tag);
    wait.commName = commName;
  }
};

// One allocation per operation: the caller's handle shares the operation's
// ownership and points at its request.
using OperationPtr = std::shared_ptr<Operation>;
inline std::shared_ptr<Request> requestOf(const OperationPtr& op) {
  return {op, &op->request};
}

}  // namespace loom

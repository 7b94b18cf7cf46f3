// A communicator: this rank's place in a group of ranks, the transport that
// connects it to the others, and the engine that runs its operations
// (collectives in call order; Sends and Recvs per peer in posting order).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "bootstrap/rendezvous.h"
#include "collectives/collectives.h"
#include "collectives/p2p_inbox.h"
#include "core/config.h"
#include "core/engine.h"
#include "core/exclusive_calls.h"
#include "core/operation.h"
#include "core/request.h"
#include "core/user_ops.h"
#include "transport/connections.h"
#include "transport/identity.h"
#include "transport/regions.h"

namespace loom {

class Communicator final : public std::enable_shared_from_this<Communicator>, public EngineHost {
 public:
  // Collective over the nranks ranks that meet at `address`.
  Communicator(int rank, int nranks, const bootstrap::RendezvousAddress& address, const CommConfig& config);
  // Lets pending operations finish (each is bounded by the timeout).
  ~Communicator();

  int rank() const { return team_.rank; }
  int nranks() const { return team_.nranks; }
  const CommConfig& config() const { return config_; }

  // Held for the whole of an API call that issues operations: a second
  // thread's overlapping call is refused (exclusive_calls.h).
  ExclusiveCalls::Scope enterCall(const char* name) { return calls_.enter(name, team_.rank); }
  // An operation with its request, to fill in, number and post.
  OperationPtr newOperation();
  // Numbers a filled-in operation in call order and records it in the
  // flight recorder; only inside enterCall's scope. `call` is null for
  // Send/Recv; for a collective it is what every rank must agree on (its
  // number is filled in here). A blocking call's operation lives on the
  // caller's stack: its request cannot be waited on, only read once run()
  // returns.
  void number(Operation& op, const char* name, const CollectiveCall* call, Lane lane);
  // Hands operations to the engine, together (a group's) and in order.
  void post(std::vector<OperationPtr> ops) { engine_->post(std::move(ops)); }
  void post(OperationPtr op) { engine_->post(std::move(op)); }
  // Posts op and waits for it, driving the engine on this thread.
  void run(OperationPtr op) { engine_->run(std::move(op)); }
  // Posts a collective-lane operation and waits for it; the sentence of a
  // failure goes to *error.
  loomResult_t run(const char* name, const CollectiveCall* call, Operation::Body body, std::string* error);

  // loomCommRegister / loomCommDeregister: collective, blocking, ordered
  // with the operations issued before them. The handle is the window's
  // number (registered.h explains what registration buys).
  void* registerBuffer(void* buffer, size_t bytes);
  void deregisterBuffer(void* handle);
  // Read it only between operations (tests do, after blocking calls).
  const RegisteredRegions& windows() const { return windows_; }

  // How this rank reaches `peer`, as its INFO line at init says ("SHM",
  // "TCP/eth0 (2 sockets)"), for tests that check what was chosen.
  std::string describeLink(int peer) const { return connections_ ? connections_->describeLink(peer) : "self"; }

  // As ncclCommSplit; null for LOOM_SPLIT_NOCOLOR. Collective over this one.
  std::unique_ptr<Communicator> split(int color, int key, const CommConfig& config);

  // Fails the running and queued operations with loomAborted; the
  // destructor then returns promptly.
  void abort();

  void recordError(const std::string& sentence);
  std::string lastError() const;
  // loomSuccess until a failure broke the communicator; then its code.
  loomResult_t asyncError() const;
  // loomRedOpCreatePreMulSum's ops.
  UserOps& userOps() { return userOps_; }
  // The flight recorder's lines, to the log at WARN (`why` heads them), or
  // printed whatever the log level (a dump the user asked for by signal).
  void dumpFlightRecorder(const std::string& why, bool whateverTheLevel) const;

 private:
  // EngineHost (public only so the engine can be handed `*this`)
  Outcome beginOperation(Operation& op) override;
  Outcome endOperation(Operation& op, std::exception_ptr error) override;
  void operationEnded(Operation& op, loomResult_t result) override;
  void publishProgress(int64_t nowMs, int waitingFor) override;
  std::string stallReport(int peer, int64_t nowMs) const override;
  std::string brokenBecause() const override;
  const Team& team() const override { return team_; }

  std::string arrivalReport(uint64_t collective) const;
  std::vector<RankIdentity> exchangeIdentities(bootstrap::RendezvousClient& rendezvous);
  void connectPeers(const std::vector<RankIdentity>& identities, bootstrap::RendezvousClient& rendezvous);
  void useNetworkRate();
  void placeMembers(const std::vector<RankIdentity>& identities);
  void checkHierarchy();

  CommConfig config_;
  Team team_;
  int spinIterations_;
  int64_t yieldMicros_;
  std::unique_ptr<bootstrap::RendezvousClient> rendezvous_;
  std::unique_ptr<Connections> connections_;
  std::atomic<bool> aborted_{false};

  ExclusiveCalls calls_;  // one call at a time: numbering needs no lock
  FlightRecorder recorder_;
  uint64_t operations_ = 0;
  uint64_t collectives_ = 0;
  // Messages sent, per peer, of every tag: a message's number is its place
  // in the pair's stream, which the receiver checks as it takes messages
  // off the FIFO; a Recv learns the number when it matches (p2p_inbox.h).
  std::vector<uint64_t> sentTo_;
  PointToPointInboxes inboxes_;

  UserOps userOps_;

  mutable std::mutex errorMutex_;
  std::string lastError_;
  std::atomic<bool> broken_{false};      // set with brokenBy_: lets execute() skip the lock
  loomResult_t brokenBy_ = loomSuccess;  // the failure that left the FIFOs out of step
  std::string brokenSentence_;
  // Calls refused because the communicator failed earlier: the first is a
  // WARN, the rest INFO, so a program that keeps posting (or had many calls
  // queued) does not flood its log with one sentence per call.
  std::atomic<bool> refusalWarned_{false};

  RegisteredRegions windows_;  // touched only by collective-lane operations, which run one at a time

  Doorbell ownDoorbell_;  // where the engine sleeps when there is no transport (one rank)
  IdleSleep ownIdleSleep_{ownDoorbell_};
  std::shared_ptr<Engine> engine_;  // last: it must stop before the rest goes; requests hold it weakly
};

}  // namespace loom

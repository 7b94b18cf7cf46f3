// A communicator: this rank's place in a group of ranks, the transport that
// connects it to the others, and the engine that runs its operations in
// issue order.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "bootstrap/rendezvous.h"
#include "collectives/collectives.h"
#include "core/config.h"
#include "core/function_ref.h"
#include "core/progress_engine.h"
#include "core/request.h"
#include "transport/shm/peer_windows.h"
#include "transport/transport.h"

namespace loom {

class Communicator {
 public:
  // Collective over the nranks ranks that meet at `address`.
  Communicator(int rank, int nranks, const bootstrap::RendezvousAddress& address, const CommConfig& config);
  // Lets pending operations finish (each is bounded by the timeout).
  ~Communicator();

  int rank() const { return team_.rank; }
  int nranks() const { return team_.nranks; }
  const CommConfig& config() const { return config_; }

  using Body = std::function<void(const Team&, const WaitContext&)>;
  // Queues the operation behind every earlier one. A blocking call on an
  // idle communicator runs it on the calling thread before returning.
  // `call` is null for Send/Recv; for a collective it is what every rank
  // must agree on (its number is filled in here), and peers compare it to
  // name a mismatched call instead of hanging.
  std::shared_ptr<Request> submit(const char* name, const CollectiveCall* call, Body body);
  // Runs the operation and returns its result (the sentence in *error). On
  // an idle communicator it runs on this thread, allocating nothing;
  // otherwise it queues a copy of body behind the pending operations and waits.
  using BodyRef = FunctionRef<void(const Team&, const WaitContext&)>;
  loomResult_t run(const char* name, const CollectiveCall* call, BodyRef body, std::string* error);

  // loomCommRegister / loomCommDeregister: collective, blocking, ordered
  // with the operations issued before them. The handle is the window's
  // number (registered.h explains what registration buys).
  void* registerBuffer(void* buffer, size_t bytes);
  void deregisterBuffer(void* handle);
  // Read it only between operations (tests do, after blocking calls).
  const shm::PeerWindows& windows() const { return windows_; }

  // As ncclCommSplit; null for LOOM_SPLIT_NOCOLOR. Collective over this one.
  std::unique_ptr<Communicator> split(int color, int key, const CommConfig& config);

  // Fails the running and queued operations with loomAborted; the
  // destructor then returns promptly.
  void abort();

  void recordError(const std::string& sentence);
  std::string lastError() const;

 private:
  struct OpInfo {
    const char* name;
    uint64_t sequence;    // every operation of this communicator
    CollectiveCall call;  // number 0 for Send/Recv; else the arrival board's number and arguments
    bool isCollective() const { return call.number != 0; }
  };
  struct Outcome {
    loomResult_t code = loomSuccess;
    std::string failure;  // the sentence; empty on success
  };
  Outcome execute(const OpInfo& info, BodyRef body);
  OpInfo nextOperation(const char* name, const CollectiveCall* call);  // with submitMutex_ held
  std::string arrivalReport(uint64_t collective) const;
  void connectPeers(bootstrap::RendezvousClient& rendezvous);
  void orderRing(bootstrap::RendezvousClient& rendezvous);

  CommConfig config_;
  Team team_;
  int spinIterations_;
  int64_t yieldMicros_;
  std::unique_ptr<bootstrap::RendezvousClient> rendezvous_;
  std::unique_ptr<Transport> transport_;
  std::atomic<bool> aborted_{false};

  std::mutex submitMutex_;  // sequence numbers follow issue order
  uint64_t operations_ = 0;
  uint64_t collectives_ = 0;

  mutable std::mutex errorMutex_;
  std::string lastError_;
  std::atomic<bool> broken_{false};      // set with brokenBy_: lets execute() skip the lock
  loomResult_t brokenBy_ = loomSuccess;  // the failure that left the FIFOs out of step
  std::string brokenSentence_;

  shm::PeerWindows windows_;  // touched only by operations, which run one at a time

  ProgressEngine engine_;  // last: its worker must stop before the rest goes
};

}  // namespace loom

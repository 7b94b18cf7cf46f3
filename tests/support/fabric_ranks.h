// Ranks as threads of this test process on one in-memory fabric
// (transport/mem/), each with its own connections, team and engine, under
// a host that does for an operation what the communicator does (numbering,
// wait context, arrival board, failure) and nothing more: the engine and the
// schedules alone, with no rendezvous, no sockets, no C API.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collectives/p2p_inbox.h"
#include "core/engine.h"
#include "core/operation.h"
#include "transport/connections.h"
#include "transport/mem/mem_fabric.h"

namespace loom::test {

struct FabricOptions {
  int nranks = 2;
  SlotShape shape{4, 4096};
  mem::Faults faults;
  int64_t timeoutMs = 30000;
  Tuning tuning;
  // Which host each rank is on (hosts numbered from 0 in order of their
  // lowest rank), for the hierarchical schedules; empty: all on one.
  std::vector<int> hostOf;
  // The ring order, team indices by position; empty: rank order. A
  // schedule that mixes up ring positions and team indices fails only
  // where they differ.
  std::vector<int> ring;
};

class FabricRank final : public EngineHost {
 public:
  FabricRank(std::shared_ptr<mem::Fabric> fabric, int rank, const FabricOptions& options);
  ~FabricRank() override;

  int rank() const { return team_.rank; }
  Engine& engine() { return *engine_; }
  mem::Fabric& fabric() { return *fabric_; }
  Connections& connections() { return *connections_; }
  const PointToPointInboxes& inboxes() const { return inboxes_; }
  // loomCommAbort's flag, which the engine's waits look at.
  void abort() {
    aborted_.store(true);
    engine_->wake();
  }
  // Stops the engine and lets go of the transport: peers waiting on this
  // rank are told it left.
  void leave();

  // Operations as the communicator makes them; the caller posts or runs them.
  OperationPtr collective(const char* name, OperationKind kind, Operation::Step step, const CollectiveArgs& args);
  OperationPtr send(int peer, const void* buffer, size_t count, loomDataType_t dtype, int tag = 0);
  // peer -1 (PostedRecvs::kAnySource): from any rank, whose rank goes to *source.
  OperationPtr recv(int peer, void* buffer, size_t count, loomDataType_t dtype, int tag = 0, int* source = nullptr);
  // A schedule of the test's own, on `lane`.
  OperationPtr custom(const char* name, Lane lane, Operation::Body body);

  // EngineHost
  Outcome beginOperation(Operation& op) override;
  Outcome endOperation(Operation& op, std::exception_ptr error) override;
  void operationEnded(Operation& op, loomResult_t result) override;
  void publishProgress(int64_t nowMs, int waitingFor) override;
  std::string stallReport(int /*peer*/, int64_t /*nowMs*/) const override { return {}; }
  std::string brokenBecause() const override;
  const Team& team() const override { return team_; }

 private:
  OperationPtr make(const char* name, Lane lane);

  std::shared_ptr<mem::Fabric> fabric_;
  FabricOptions options_;
  std::unique_ptr<Connections> connections_;
  Team team_;
  std::atomic<bool> aborted_{false};
  std::shared_ptr<Engine> engine_;
  uint64_t operations_ = 0;
  uint64_t collectives_ = 0;
  std::map<int, uint64_t> sentTo_;  // by peer, every tag's messages
  PointToPointInboxes inboxes_;
  std::string name_ = "fabric";
  mutable std::mutex brokenMutex_;
  std::string broken_;
};

// Every rank of a new fabric.
// The arguments of one collective call, as the C API fills them.
CollectiveArgs collectiveArgs(const void* send, void* recv, size_t count, loomDataType_t dtype, loomRedOp_t op,
                              int root = 0);

std::vector<std::unique_ptr<FabricRank>> makeFabricRanks(const FabricOptions& options);
// The rank counts the logarithmic schedules are tested at: every count
// from 1 to 17 (powers of two, folded ranks, short last steps), then 24,
// 32 and 64.
std::vector<int> logScheduleRankCounts();
// A ring order unlike rank order (0 2 4 ... 1 3 5 ...), for
// FabricOptions::ring: ring positions and team indices then differ.
std::vector<int> evensThenOdds(int n);
// Runs body(rank) on a thread per rank, and returns once all have.
void onEveryRank(std::vector<std::unique_ptr<FabricRank>>& ranks, const std::function<void(FabricRank&)>& body);

}  // namespace loom::test

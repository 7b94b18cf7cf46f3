#include "support/fabric_ranks.h"

#include <thread>

#include "base/error.h"
#include "simulate/in_process_team.h"
#include "transport/mem/mem_transport.h"

namespace loom::test {

FabricRank::FabricRank(std::shared_ptr<mem::Fabric> fabric, int rank, const FabricOptions& options)
    : fabric_(std::move(fabric)), options_(options) {
  const int nranks = options.nranks;
  connections_ = std::make_unique<Connections>(rank, nranks, simulate::inMemoryKind(), fabric_->shape(),
                                               std::make_unique<mem::MemTransport>(fabric_, rank));
  inboxes_.resize(nranks);
  team_ = simulate::inProcessTeam(rank, nranks, options.hostOf, options.ring, connections_.get(), &inboxes_,
                                  options.tuning);
  EngineSettings settings;
  settings.nranks = nranks;
  settings.timeoutMs = options.timeoutMs;
  settings.aborted = &aborted_;
  engine_ = std::make_shared<Engine>(*this, connections_->idleSleep(), settings);
}

FabricRank::~FabricRank() {
  leave();
}

void FabricRank::leave() {
  if (engine_) engine_->stop();
  engine_.reset();
  connections_.reset();
}

OperationPtr FabricRank::make(const char* name, Lane lane) {
  OperationPtr op = std::make_shared<Operation>(engine_);
  op->name = name;
  op->lane = lane;
  op->sequence = ++operations_;
  return op;
}

OperationPtr FabricRank::collective(const char* name, OperationKind kind, Operation::Step step,
                                    const CollectiveArgs& args) {
  OperationPtr op = make(name, Lane::collective());
  op->step = step;
  op->args = args;
  op->call = simulate::inProcessCall(++collectives_, kind, args);
  return op;
}

OperationPtr FabricRank::send(int peer, const void* buffer, size_t count, loomDataType_t dtype, int tag) {
  OperationPtr op = make("Send", Lane::sendTo(peer));
  op->step = pointToPointSend;
  op->args.sendbuf = buffer;
  op->args.count = count;
  op->args.dtype = dtype;
  op->args.root = peer;
  op->args.tag = tag;
  op->messageNumber = ++sentTo_[peer];
  return op;
}

OperationPtr FabricRank::recv(int peer, void* buffer, size_t count, loomDataType_t dtype, int tag, int* source) {
  OperationPtr op = make("Recv", Lane::recvFrom(peer, tag));
  op->step = pointToPointRecv;
  op->args.recvbuf = buffer;
  op->args.count = count;
  op->args.dtype = dtype;
  op->args.root = peer;
  op->args.tag = tag;
  op->args.source = source;
  inboxes_.posted().posted(op->sequence, peer, tag);
  return op;
}

OperationPtr FabricRank::custom(const char* name, Lane lane, Operation::Body body) {
  OperationPtr op = make(name, lane);
  op->body = std::move(body);
  if (lane.kind == Lane::Kind::kCollective) {
    op->call.number = ++collectives_;
    op->call.kind = OperationKind::kBarrier;
  }
  return op;
}

void FabricRank::operationEnded(Operation& op, loomResult_t /*result*/) {
  if (op.lane.kind == Lane::Kind::kRecv) inboxes_.posted().ended(op.sequence, op.lane.peer, op.lane.tag);
}

Outcome FabricRank::beginOperation(Operation& op) {
  op.prepareWaits(options_.timeoutMs, &aborted_, team_.rank, &name_);
  const WaitContext& wait = op.wait;
  Outcome outcome;
  const std::string broken = brokenBecause();
  if (!broken.empty()) {
    outcome.code = loomInvalidUsage;
    outcome.failure = wait.describe() + " cannot run: this communicator failed earlier (" + broken + ")";
  } else if (aborted_.load()) {
    outcome.code = loomAborted;
    outcome.failure = wait.describe() + " was aborted before it started";
  } else if (op.isCollective()) {
    connections_->announceCollectiveStarted(op.call);
  }
  return outcome;
}

Outcome FabricRank::endOperation(Operation& op, std::exception_ptr error) {
  Outcome outcome;
  if (!error) return outcome;
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    outcome.code = e.code();
    outcome.failure = e.what();
  } catch (const std::exception& e) {
    outcome.code = loomInternalError;
    outcome.failure = e.what();
  }
  const std::string who = op.wait.describe();
  if (outcome.failure.compare(0, who.size(), who) != 0) outcome.failure = who + ": " + outcome.failure;
  {
    std::lock_guard<std::mutex> lock(brokenMutex_);
    if (broken_.empty()) broken_ = outcome.failure;
  }
  connections_->announceFailure(outcome.failure);
  return outcome;
}

void FabricRank::publishProgress(int64_t nowMs, int waitingFor) {
  connections_->publishProgress(nowMs, waitingFor);
}

std::string FabricRank::brokenBecause() const {
  std::lock_guard<std::mutex> lock(brokenMutex_);
  return broken_;
}

std::vector<int> logScheduleRankCounts() {
  std::vector<int> counts;
  for (int n = 1; n <= 17; ++n) counts.push_back(n);
  for (int n : {24, 32, 64}) counts.push_back(n);
  return counts;
}

std::vector<int> evensThenOdds(int n) {
  std::vector<int> ring;
  for (int start : {0, 1})
    for (int r = start; r < n; r += 2) ring.push_back(r);
  return ring;
}

std::vector<std::unique_ptr<FabricRank>> makeFabricRanks(const FabricOptions& options) {
  auto fabric = std::make_shared<mem::Fabric>(options.nranks, options.shape, options.faults);
  std::vector<std::unique_ptr<FabricRank>> ranks;
  for (int r = 0; r < options.nranks; ++r) ranks.push_back(std::make_unique<FabricRank>(fabric, r, options));
  return ranks;
}

void onEveryRank(std::vector<std::unique_ptr<FabricRank>>& ranks, const std::function<void(FabricRank&)>& body) {
  std::vector<std::thread> threads;
  for (auto& rank : ranks) threads.emplace_back([&body, &rank] { body(*rank); });
  for (std::thread& thread : threads) thread.join();
}

CollectiveArgs collectiveArgs(const void* send, void* recv, size_t count, loomDataType_t dtype, loomRedOp_t op,
                              int root) {
  CollectiveArgs args;
  args.sendbuf = send;
  args.recvbuf = recv;
  args.count = count;
  args.dtype = dtype;
  args.op = op;
  args.root = root;
  return args;
}

}  // namespace loom::test

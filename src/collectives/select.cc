// Algorithm choice: plan.h decides (the same function `loom-topo --plan`
// prints), from inputs that are the same on every rank (sizes, rank count,
// hosts, the LOOM_ALGO setting, whether peers' memory is readable, which
// ranks agreed at init), so all ranks pick alike and their FIFOs stay in
// step; this file runs what it decided.
#include <cstdint>

#include "base/dtype_size.h"
#include "collectives/all_pairs.h"
#include "collectives/collectives.h"
#include "collectives/direct.h"
#include "collectives/hierarchical.h"
#include "collectives/plan.h"
#include "collectives/registered.h"
#include "collectives/tuning_log.h"

namespace loom {
namespace {

// The large-message path for AllReduce, AllGather and ReduceScatter:
// registered buffers, else cross-memory attach, else the ring. Once
// addresses are swapped every rank knows whether all buffers are registered,
// so all fall back alike.
using SwappedStep = Task<> (*)(const Team&, const CollectiveArgs&, const WaitContext&, const std::vector<PeerBuffers>&);
using RegisteredStep = Task<bool> (*)(const Team&, const CollectiveArgs&, const WaitContext&,
                                      const std::vector<PeerBuffers>&);
using RingStep = Task<> (*)(const Team&, const CollectiveArgs&, const WaitContext&);

// After the addresses are swapped: a coroutine of its own, so that the
// ring, which needs no swap, runs without this frame (which keeps `in`:
// hence by value).
Task<> swappedLargeMessage(TunedCollective collective, PlanInputs in, const Team& team, const CollectiveArgs& args,
                           const WaitContext& wait, size_t bytes, RegisteredStep registered, SwappedStep direct,
                           RingStep ring) {
  const bool lookForWindows = mayUseRegistered(collective, in, team.tuning, bytes);
  std::vector<PeerBuffers> peers = co_await swapAddresses(team, args, wait);
  if (lookForWindows && co_await registered(team, args, wait, peers)) {
    noteAlgorithm(team, wait, collective, TunedAlgorithm::kRegistered, bytes);
  } else if (mayCopyDirect(collective, in, team.tuning, bytes)) {
    noteAlgorithm(team, wait, collective, TunedAlgorithm::kDirect, bytes);
    co_await direct(team, args, wait, peers);
  } else {
    noteAlgorithm(team, wait, collective, TunedAlgorithm::kRing, bytes);
    co_await ring(team, args, wait);
  }
}

// The choosers below are plain functions that return the chosen schedule's
// task, not coroutines awaiting it: one coroutine frame fewer on every call.
Task<> largeMessage(TunedCollective collective, const PlanInputs& in, const Team& team, const CollectiveArgs& args,
                    const WaitContext& wait, size_t bytes, RegisteredStep registered, SwappedStep direct,
                    RingStep ring) {
  if (!mayUseRegistered(collective, in, team.tuning, bytes) && !mayCopyDirect(collective, in, team.tuning, bytes)) {
    noteAlgorithm(team, wait, collective, TunedAlgorithm::kRing, bytes);
    return ring(team, args, wait);
  }
  return swappedLargeMessage(collective, in, team, args, wait, bytes, registered, direct, ring);
}

Task<> nothingToDo() {
  co_return;
}

}  // namespace

Task<> allReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * dtypeSize(args.dtype);
  const PlanInputs in = planInputsOf(team);
  const TunedAlgorithm algorithm = planAllReduce(in, team.tuning, bytes);
  if (algorithm != TunedAlgorithm::kRing) noteAlgorithm(team, wait, TunedCollective::kAllReduce, algorithm, bytes);
  switch (algorithm) {
    case TunedAlgorithm::kTree: return doubleTreeAllReduce(team, args, wait);
    case TunedAlgorithm::kHalvingDoubling: return halvingDoublingAllReduce(team, args, wait);
    case TunedAlgorithm::kHostLeaders: return leaderAllReduce(team, args, wait);
    case TunedAlgorithm::kAllPairs: return allPairsAllReduce(team, args, wait);
    case TunedAlgorithm::kHierarchical: return hierarchicalAllReduce(team, args, wait);
    default:
      return largeMessage(TunedCollective::kAllReduce, in, team, args, wait, bytes, registeredAllReduce,
                          directAllReduce, ringAllReduce);
  }
}

Task<> allGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * dtypeSize(args.dtype) * team.nranks;
  const PlanInputs in = planInputsOf(team);
  const TunedAlgorithm algorithm = planAllGather(in, team.tuning, bytes);
  if (algorithm != TunedAlgorithm::kRing) noteAlgorithm(team, wait, TunedCollective::kAllGather, algorithm, bytes);
  switch (algorithm) {
    case TunedAlgorithm::kBruck: return bruckAllGather(team, args, wait);
    case TunedAlgorithm::kHalvingDoubling: return halvingDoublingAllGather(team, args, wait);
    case TunedAlgorithm::kHostLeaders: return leaderAllGather(team, args, wait);
    case TunedAlgorithm::kHierarchical: return hierarchicalAllGather(team, args, wait);
    default:
      return largeMessage(TunedCollective::kAllGather, in, team, args, wait, bytes, registeredAllGather,
                          directAllGather, ringAllGather);
  }
}

Task<> reduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * dtypeSize(args.dtype) * team.nranks;
  const PlanInputs in = planInputsOf(team);
  const TunedAlgorithm algorithm = planReduceScatter(in, team.tuning, bytes);
  if (algorithm != TunedAlgorithm::kRing) noteAlgorithm(team, wait, TunedCollective::kReduceScatter, algorithm, bytes);
  switch (algorithm) {
    case TunedAlgorithm::kHalvingDoubling: return halvingDoublingReduceScatter(team, args, wait);
    case TunedAlgorithm::kHierarchical: return hierarchicalReduceScatter(team, args, wait);
    default:
      return largeMessage(TunedCollective::kReduceScatter, in, team, args, wait, bytes, registeredReduceScatter,
                          directReduceScatter, ringReduceScatter);
  }
}

Task<> broadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * dtypeSize(args.dtype);
  const TunedAlgorithm algorithm =
      planBroadcastOrReduce(TunedCollective::kBroadcast, planInputsOf(team), team.tuning, bytes);
  noteAlgorithm(team, wait, TunedCollective::kBroadcast, algorithm, bytes);
  switch (algorithm) {
    case TunedAlgorithm::kTree: return treeBroadcast(team, args, wait);
    case TunedAlgorithm::kBinomial: return binomialBroadcast(team, args, wait);
    default: return chainBroadcast(team, args, wait);
  }
}

Task<> reduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * dtypeSize(args.dtype);
  const TunedAlgorithm algorithm =
      planBroadcastOrReduce(TunedCollective::kReduce, planInputsOf(team), team.tuning, bytes);
  noteAlgorithm(team, wait, TunedCollective::kReduce, algorithm, bytes);
  switch (algorithm) {
    case TunedAlgorithm::kTree: return treeReduce(team, args, wait);
    case TunedAlgorithm::kBinomial: return binomialReduce(team, args, wait);
    default: return chainReduce(team, args, wait);
  }
}

Task<> barrier(const Team& team, const WaitContext& wait) {
  if (team.nranks == 1) return nothingToDo();
  const TunedAlgorithm algorithm = planBarrier(planInputsOf(team), team.tuning);
  noteAlgorithm(team, wait, TunedCollective::kBarrier, algorithm, 0);
  switch (algorithm) {
    case TunedAlgorithm::kAllPairs: return allPairsBarrier(team, wait);
    case TunedAlgorithm::kDissemination: return disseminationBarrier(team, wait);
    default: return ringBarrier(team, wait);
  }
}

}  // namespace loom

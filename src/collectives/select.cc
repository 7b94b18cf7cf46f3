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

// The flat schedules and the single-copy steps of AllReduce, AllGather and
// ReduceScatter, for the chooser below.
using SwappedStep = Task<> (*)(const Team&, const CollectiveArgs&, const WaitContext&, const std::vector<PeerBuffers>&);
using RegisteredStep = Task<bool> (*)(const Team&, const CollectiveArgs&, const WaitContext&,
                                      const std::vector<PeerBuffers>&);
using FlatStep = Task<> (*)(TunedAlgorithm, const Team&, const CollectiveArgs&, const WaitContext&);
using Planner = TunedAlgorithm (*)(const PlanInputs&, const Tuning&, size_t);

struct Schedules {
  TunedCollective collective;
  Planner plan;
  RegisteredStep registered;
  SwappedStep direct;
  FlatStep flat;
};

// Single copy, after the addresses are swapped. Once swapped every rank
// knows whether all buffers are registered, so where they are not all fall
// back alike, to what the model picks without them (single-copy reads, or
// a flat schedule). A coroutine of its own, so that the flat schedules run
// without this frame (which keeps `in`: hence by value).
Task<> singleCopy(const Schedules& schedules, TunedAlgorithm chosen, PlanInputs in, const Team& team,
                  const CollectiveArgs& args, const WaitContext& wait, size_t bytes) {
  std::vector<PeerBuffers> peers = co_await swapAddresses(team, args, wait);
  if (chosen == TunedAlgorithm::kRegistered) {
    if (co_await schedules.registered(team, args, wait, peers)) {
      noteAlgorithm(team, wait, schedules.collective, TunedAlgorithm::kRegistered, bytes);
      co_return;
    }
    in.registeredWindows = false;
    in.memo = nullptr;  // the team's memo keeps its choice with registered buffers
    chosen = schedules.plan(in, team.tuning, bytes);
    noteAlgorithm(team, wait, schedules.collective, chosen, bytes, true);
  } else {
    noteAlgorithm(team, wait, schedules.collective, chosen, bytes);
  }
  if (chosen == TunedAlgorithm::kDirect) {
    co_await schedules.direct(team, args, wait, peers);
  } else {
    co_await schedules.flat(chosen, team, args, wait);
  }
}

// A plain function that returns the chosen schedule's task, not a coroutine
// awaiting it: one coroutine frame fewer on every call.
Task<> choose(const Schedules& schedules, const Team& team, const CollectiveArgs& args, const WaitContext& wait,
              size_t bytes) {
  const PlanInputs in = planInputsOf(team);
  const TunedAlgorithm algorithm = schedules.plan(in, team.tuning, bytes);
  if (algorithm == TunedAlgorithm::kRegistered || algorithm == TunedAlgorithm::kDirect)
    return singleCopy(schedules, algorithm, in, team, args, wait, bytes);
  noteAlgorithm(team, wait, schedules.collective, algorithm, bytes);
  return schedules.flat(algorithm, team, args, wait);
}

Task<> nothingToDo() {
  co_return;
}

Task<> flatAllReduce(TunedAlgorithm algorithm, const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  switch (algorithm) {
    case TunedAlgorithm::kTree: return doubleTreeAllReduce(team, args, wait);
    case TunedAlgorithm::kHalvingDoubling: return halvingDoublingAllReduce(team, args, wait);
    case TunedAlgorithm::kHostLeaders: return leaderAllReduce(team, args, wait);
    case TunedAlgorithm::kAllPairs: return allPairsAllReduce(team, args, wait);
    case TunedAlgorithm::kHierarchical: return hierarchicalAllReduce(team, args, wait);
    default: return ringAllReduce(team, args, wait);
  }
}

Task<> flatAllGather(TunedAlgorithm algorithm, const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  switch (algorithm) {
    case TunedAlgorithm::kBruck: return bruckAllGather(team, args, wait);
    case TunedAlgorithm::kHalvingDoubling: return halvingDoublingAllGather(team, args, wait);
    case TunedAlgorithm::kHostLeaders: return leaderAllGather(team, args, wait);
    case TunedAlgorithm::kHierarchical: return hierarchicalAllGather(team, args, wait);
    default: return ringAllGather(team, args, wait);
  }
}

Task<> flatReduceScatter(TunedAlgorithm algorithm, const Team& team, const CollectiveArgs& args,
                         const WaitContext& wait) {
  switch (algorithm) {
    case TunedAlgorithm::kHalvingDoubling: return halvingDoublingReduceScatter(team, args, wait);
    case TunedAlgorithm::kHierarchical: return hierarchicalReduceScatter(team, args, wait);
    default: return ringReduceScatter(team, args, wait);
  }
}

const Schedules kAllReduce{TunedCollective::kAllReduce, planAllReduce, registeredAllReduce, directAllReduce,
                           flatAllReduce};
const Schedules kAllGather{TunedCollective::kAllGather, planAllGather, registeredAllGather, directAllGather,
                           flatAllGather};
const Schedules kReduceScatter{TunedCollective::kReduceScatter, planReduceScatter, registeredReduceScatter,
                               directReduceScatter, flatReduceScatter};

}  // namespace

Task<> allReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  return choose(kAllReduce, team, args, wait, args.count * dtypeSize(args.dtype));
}

Task<> allGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  return choose(kAllGather, team, args, wait, args.count * dtypeSize(args.dtype) * team.nranks);
}

Task<> reduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  return choose(kReduceScatter, team, args, wait, args.count * dtypeSize(args.dtype) * team.nranks);
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

// Algorithm choice. Every input to the decision (sizes, rank count, the
// LOOM_ALGO setting, whether peers' memory is readable, which ranks agreed
// at init) is the same on every rank, so all ranks pick alike and their FIFOs
// stay in step.
//
// LOOM_ALGO (algorithm_table.h) says which algorithms each collective may
// take. An algorithm it leaves a collective alone runs at every size where
// it can; otherwise the choosers below try the allowed algorithms in their
// order, with the size limits of the automatic choice. The ring runs what
// nothing allowed can (the TUNING line then says so).
#include <cstdint>

#include "base/dtype_size.h"
#include "collectives/all_pairs.h"
#include "collectives/collectives.h"
#include "collectives/direct.h"
#include "collectives/hierarchical.h"
#include "collectives/registered.h"
#include "collectives/tuning_log.h"

namespace loom {
namespace {

// What LOOM_ALGO leaves one collective.
class Allowed {
 public:
  Allowed(const Team& team, TunedCollective collective) : filter_(team.tuning.allowed), collective_(collective) {}
  bool may(TunedAlgorithm algorithm) const { return filter_.allows(collective_, algorithm); }
  bool alone(TunedAlgorithm algorithm) const { return filter_.onlyAllows(collective_, algorithm); }
  // The automatic size limit, or none for an algorithm left alone.
  size_t limit(TunedAlgorithm algorithm, size_t automatic) const { return alone(algorithm) ? SIZE_MAX : automatic; }
  TunedCollective collective() const { return collective_; }

 private:
  const AlgorithmFilter& filter_;
  TunedCollective collective_;
};

// Single-copy transfers for a call of `bytes` (the whole buffer, as
// nccl-tests' size column counts it): below directMinBytes swapping
// addresses costs more than the copy it saves.
bool useDirect(const Team& team, const Allowed& allowed, size_t bytes) {
  return allowed.may(TunedAlgorithm::kDirect) && directAvailable(team) &&
         (allowed.alone(TunedAlgorithm::kDirect) || bytes >= team.tuning.directMinBytes);
}

bool lookForRegistered(const Team& team, const Allowed& allowed, size_t bytes) {
  return allowed.may(TunedAlgorithm::kRegistered) && registeredWindowsExist(team) &&
         (allowed.alone(TunedAlgorithm::kRegistered) || bytes >= team.tuning.directMinBytes);
}

// The large-message choice for AllReduce, AllGather and ReduceScatter:
// registered buffers, else cross-memory attach, else the ring. Once
// addresses are swapped every rank knows whether all buffers are registered,
// so all fall back alike.
using SwappedStep = Task<> (*)(const Team&, const CollectiveArgs&, const WaitContext&, const std::vector<PeerBuffers>&);
using RegisteredStep = Task<bool> (*)(const Team&, const CollectiveArgs&, const WaitContext&,
                                      const std::vector<PeerBuffers>&);
using RingStep = Task<> (*)(const Team&, const CollectiveArgs&, const WaitContext&);

// After the addresses are swapped: a coroutine of its own, so that the
// ring, which needs no swap, runs without this frame.
Task<> swappedLargeMessage(Allowed allowed, const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                           size_t bytes, RegisteredStep registered, SwappedStep direct, RingStep ring) {
  const bool lookForWindows = lookForRegistered(team, allowed, bytes);
  std::vector<PeerBuffers> peers = co_await swapAddresses(team, args, wait);
  if (lookForWindows && co_await registered(team, args, wait, peers)) {
    noteAlgorithm(team, wait, allowed.collective(), TunedAlgorithm::kRegistered, bytes);
  } else if (useDirect(team, allowed, bytes)) {
    noteAlgorithm(team, wait, allowed.collective(), TunedAlgorithm::kDirect, bytes);
    co_await direct(team, args, wait, peers);
  } else {
    noteAlgorithm(team, wait, allowed.collective(), TunedAlgorithm::kRing, bytes);
    co_await ring(team, args, wait);
  }
}

// The choosers below are plain functions that return the chosen schedule's
// task, not coroutines awaiting it: one coroutine frame fewer on every call.
Task<> largeMessage(const Allowed& allowed, const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                    size_t bytes, RegisteredStep registered, SwappedStep direct, RingStep ring) {
  if (!lookForRegistered(team, allowed, bytes) && !useDirect(team, allowed, bytes)) {
    noteAlgorithm(team, wait, allowed.collective(), TunedAlgorithm::kRing, bytes);
    return ring(team, args, wait);
  }
  return swappedLargeMessage(allowed, team, args, wait, bytes, registered, direct, ring);
}

// Across hosts, AllReduce (on any layout where some host has several
// ranks), AllGather and ReduceScatter (with as many ranks on every host) go
// in steps within and across hosts (hierarchical.h): the network carries
// less. Single-copy reads (one transport reaching every
// peer's memory) beat it, so it steps aside for them unless left alone
// (init checked the layout then).
bool useHierarchy(const Team& team, const Allowed& allowed) {
  const bool fits =
      allowed.collective() == TunedCollective::kAllReduce ? hierarchicalAllReduceFits(team) : team.ranksPerHost > 0;
  return allowed.may(TunedAlgorithm::kHierarchical) && fits &&
         (allowed.alone(TunedAlgorithm::kHierarchical) || team.peerMemory() == nullptr);
}

// A small AllReduce or AllGather across hosts goes through one leader per
// host, on any layout of several hosts (hierarchical.h); single-copy reads,
// where one transport reaches every peer's memory, need no leaders.
bool useLeaders(const Team& team, const Allowed& allowed) {
  return allowed.may(TunedAlgorithm::kHostLeaders) &&
         (allowed.alone(TunedAlgorithm::kHostLeaders) || team.peerMemory() == nullptr);
}

Task<> nothingToDo() {
  co_return;
}

}  // namespace

Task<> allReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * dtypeSize(args.dtype);
  const Allowed allowed(team, TunedCollective::kAllReduce);
  const size_t smallBytes = team.tuning.allPairsMaxBytes;
  auto note = [&](TunedAlgorithm algorithm) {
    noteAlgorithm(team, wait, TunedCollective::kAllReduce, algorithm, bytes);
  };
  // The logarithmic schedules run where LOOM_ALGO asks for them; the
  // automatic choice does not take them yet.
  if (allowed.alone(TunedAlgorithm::kTree)) {
    note(TunedAlgorithm::kTree);
    return doubleTreeAllReduce(team, args, wait);
  } else if (allowed.alone(TunedAlgorithm::kHalvingDoubling)) {
    note(TunedAlgorithm::kHalvingDoubling);
    return halvingDoublingAllReduce(team, args, wait);
  } else if (useLeaders(team, allowed) &&
             fitsLeaderAllReduce(team, bytes, allowed.limit(TunedAlgorithm::kHostLeaders, smallBytes))) {
    note(TunedAlgorithm::kHostLeaders);
    return leaderAllReduce(team, args, wait);
  } else if (allowed.may(TunedAlgorithm::kAllPairs) &&
             fitsAllPairs(team, bytes, allowed.limit(TunedAlgorithm::kAllPairs, smallBytes))) {
    note(TunedAlgorithm::kAllPairs);
    return allPairsAllReduce(team, args, wait);
  } else if (useHierarchy(team, allowed)) {
    note(TunedAlgorithm::kHierarchical);
    return hierarchicalAllReduce(team, args, wait);
  } else if (!allowed.may(TunedAlgorithm::kRing) && allowed.may(TunedAlgorithm::kHalvingDoubling)) {
    note(TunedAlgorithm::kHalvingDoubling);
    return halvingDoublingAllReduce(team, args, wait);
  } else if (!allowed.may(TunedAlgorithm::kRing) && allowed.may(TunedAlgorithm::kTree)) {
    note(TunedAlgorithm::kTree);
    return doubleTreeAllReduce(team, args, wait);
  } else {
    return largeMessage(allowed, team, args, wait, bytes, registeredAllReduce, directAllReduce, ringAllReduce);
  }
}

Task<> allGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t blockBytes = args.count * dtypeSize(args.dtype);
  const size_t bytes = blockBytes * team.nranks;
  const Allowed allowed(team, TunedCollective::kAllGather);
  // Bruck's steps run where LOOM_ALGO asks for them; the automatic choice
  // does not take them yet.
  if (allowed.alone(TunedAlgorithm::kBruck)) {
    noteAlgorithm(team, wait, TunedCollective::kAllGather, TunedAlgorithm::kBruck, bytes);
    return bruckAllGather(team, args, wait);
  } else if (useLeaders(team, allowed) &&
             fitsLeaderAllGather(team, blockBytes,
                                 allowed.limit(TunedAlgorithm::kHostLeaders, team.tuning.allPairsMaxBytes))) {
    noteAlgorithm(team, wait, TunedCollective::kAllGather, TunedAlgorithm::kHostLeaders, bytes);
    return leaderAllGather(team, args, wait);
  } else if (useHierarchy(team, allowed)) {
    noteAlgorithm(team, wait, TunedCollective::kAllGather, TunedAlgorithm::kHierarchical, bytes);
    return hierarchicalAllGather(team, args, wait);
  } else if (!allowed.may(TunedAlgorithm::kRing) && allowed.may(TunedAlgorithm::kBruck)) {
    noteAlgorithm(team, wait, TunedCollective::kAllGather, TunedAlgorithm::kBruck, bytes);
    return bruckAllGather(team, args, wait);
  } else {
    return largeMessage(allowed, team, args, wait, bytes, registeredAllGather, directAllGather, ringAllGather);
  }
}

Task<> reduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * dtypeSize(args.dtype) * team.nranks;
  const Allowed allowed(team, TunedCollective::kReduceScatter);
  auto halvingDoubling = [&] {
    noteAlgorithm(team, wait, TunedCollective::kReduceScatter, TunedAlgorithm::kHalvingDoubling, bytes);
    return halvingDoublingReduceScatter(team, args, wait);
  };
  // Recursive halving runs where LOOM_ALGO asks for it, as for AllReduce.
  if (allowed.alone(TunedAlgorithm::kHalvingDoubling)) {
    return halvingDoubling();
  } else if (useHierarchy(team, allowed)) {
    noteAlgorithm(team, wait, TunedCollective::kReduceScatter, TunedAlgorithm::kHierarchical, bytes);
    return hierarchicalReduceScatter(team, args, wait);
  } else if (!allowed.may(TunedAlgorithm::kRing) && allowed.may(TunedAlgorithm::kHalvingDoubling)) {
    return halvingDoubling();
  } else {
    return largeMessage(allowed, team, args, wait, bytes, registeredReduceScatter, directReduceScatter,
                        ringReduceScatter);
  }
}

namespace {

// Trees for small messages (fewer hops), chains along the ring for large
// ones (every link busy once the pipeline fills). With two ranks both are
// one hop: the chain.
bool useTree(const Team& team, const Allowed& allowed, size_t bytes) {
  return team.nranks >= 3 && allowed.may(TunedAlgorithm::kTree) &&
         (allowed.alone(TunedAlgorithm::kTree) || bytes <= team.tuning.treeMaxBytes);
}

}  // namespace

Task<> broadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * dtypeSize(args.dtype);
  const bool tree = useTree(team, Allowed(team, TunedCollective::kBroadcast), bytes);
  noteAlgorithm(team, wait, TunedCollective::kBroadcast, tree ? TunedAlgorithm::kTree : TunedAlgorithm::kRing, bytes);
  if (tree)
    return treeBroadcast(team, args, wait);
  else
    return chainBroadcast(team, args, wait);
}

Task<> reduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * dtypeSize(args.dtype);
  const bool tree = useTree(team, Allowed(team, TunedCollective::kReduce), bytes);
  noteAlgorithm(team, wait, TunedCollective::kReduce, tree ? TunedAlgorithm::kTree : TunedAlgorithm::kRing, bytes);
  if (tree)
    return treeReduce(team, args, wait);
  else
    return chainReduce(team, args, wait);
}

Task<> barrier(const Team& team, const WaitContext& wait) {
  if (team.nranks == 1) return nothingToDo();
  const Allowed allowed(team, TunedCollective::kBarrier);
  if (allowed.may(TunedAlgorithm::kAllPairs)) {
    noteAlgorithm(team, wait, TunedCollective::kBarrier, TunedAlgorithm::kAllPairs, 0);
    return allPairsBarrier(team, wait);
  } else if (allowed.may(TunedAlgorithm::kDissemination)) {
    noteAlgorithm(team, wait, TunedCollective::kBarrier, TunedAlgorithm::kDissemination, 0);
    return disseminationBarrier(team, wait);
  } else {
    noteAlgorithm(team, wait, TunedCollective::kBarrier, TunedAlgorithm::kRing, 0);
    return ringBarrier(team, wait);
  }
}

}  // namespace loom

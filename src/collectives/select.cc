// Algorithm choice. Every input to the decision (sizes, rank count, the
// LOOM_ALGO setting, whether peers' memory is readable, which ranks agreed
// at init) is the same on every rank, so all ranks pick alike and their FIFOs
// stay in step.
#include "collectives/all_pairs.h"
#include "collectives/collectives.h"
#include "collectives/direct.h"
#include "collectives/hierarchical.h"
#include "collectives/registered.h"
#include "collectives/tuning_log.h"

namespace loom {
namespace {

// Whether a call of `bytes` (the whole buffer, as nccl-tests' size column
// counts it) may go single-copy: below directMinBytes swapping addresses
// costs more than the copy it saves.
bool singleCopySize(const Team& team, size_t bytes) {
  switch (team.tuning.force) {
    case Tuning::Force::kDirect: return true;
    case Tuning::Force::kAuto: return bytes >= team.tuning.directMinBytes;
    default: return false;
  }
}

bool useDirect(const Team& team, size_t bytes) {
  return directAvailable(team) && singleCopySize(team, bytes);
}

bool lookForRegistered(const Team& team, size_t bytes) {
  return registeredWindowsExist(team) && singleCopySize(team, bytes);
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
Task<> swappedLargeMessage(TunedCollective collective, const Team& team, const CollectiveArgs& args,
                           const WaitContext& wait, size_t bytes, RegisteredStep registered, SwappedStep direct,
                           RingStep ring) {
  const bool lookForWindows = lookForRegistered(team, bytes);
  std::vector<PeerBuffers> peers = co_await swapAddresses(team, args, wait);
  if (lookForWindows && co_await registered(team, args, wait, peers)) {
    noteAlgorithm(team, wait, collective, TunedAlgorithm::kRegistered, bytes);
  } else if (useDirect(team, bytes)) {
    noteAlgorithm(team, wait, collective, TunedAlgorithm::kDirect, bytes);
    co_await direct(team, args, wait, peers);
  } else {
    noteAlgorithm(team, wait, collective, TunedAlgorithm::kRing, bytes);
    co_await ring(team, args, wait);
  }
}

// The choosers below are plain functions that return the chosen schedule's
// task, not coroutines awaiting it: one coroutine frame fewer on every call.
Task<> largeMessage(TunedCollective collective, const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                    size_t bytes, RegisteredStep registered, SwappedStep direct, RingStep ring) {
  if (!lookForRegistered(team, bytes) && !useDirect(team, bytes)) {
    noteAlgorithm(team, wait, collective, TunedAlgorithm::kRing, bytes);
    return ring(team, args, wait);
  }
  return swappedLargeMessage(collective, team, args, wait, bytes, registered, direct, ring);
}

// Across hosts with as many ranks on each, AllReduce, AllGather and
// ReduceScatter go in steps within and across hosts (hierarchical.h): the
// network carries less. Single-copy reads (one transport reaching every
// peer's memory) beat it, so it steps aside for them.
bool useHierarchy(const Team& team) {
  switch (team.tuning.force) {
    case Tuning::Force::kHierarchical: return true;  // init checked the layout
    case Tuning::Force::kAuto: return team.ranksPerHost > 0 && team.peerMemory() == nullptr;
    default: return false;
  }
}

// A small AllReduce across hosts goes through one leader per host, on any
// layout of several hosts (hierarchical.h); single-copy reads, where one
// transport reaches every peer's memory, need no leaders.
bool useLeaders(const Team& team) {
  switch (team.tuning.force) {
    case Tuning::Force::kHierarchical: return true;
    case Tuning::Force::kAuto: return team.peerMemory() == nullptr;
    default: return false;
  }
}

Task<> nothingToDo() {
  co_return;
}

}  // namespace

Task<> allReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * loomTypeSize(args.dtype);
  const Tuning& tuning = team.tuning;
  const bool hierarchy = useHierarchy(team);
  bool allPairs = tuning.force == Tuning::Force::kAllPairs
                      ? fitsAllPairs(team, bytes, SIZE_MAX)
                      : tuning.force == Tuning::Force::kAuto && fitsAllPairs(team, bytes, tuning.allPairsMaxBytes);
  if (tuning.force == Tuning::Force::kTree) {
    noteAlgorithm(team, wait, TunedCollective::kAllReduce, TunedAlgorithm::kTree, bytes);
    return doubleTreeAllReduce(team, args, wait);
  } else if (tuning.force == Tuning::Force::kHalvingDoubling) {
    noteAlgorithm(team, wait, TunedCollective::kAllReduce, TunedAlgorithm::kHalvingDoubling, bytes);
    return halvingDoublingAllReduce(team, args, wait);
  } else if (useLeaders(team) && fitsLeaderAllReduce(team, bytes)) {
    noteAlgorithm(team, wait, TunedCollective::kAllReduce, TunedAlgorithm::kHostLeaders, bytes);
    return leaderAllReduce(team, args, wait);
  } else if (allPairs) {
    noteAlgorithm(team, wait, TunedCollective::kAllReduce, TunedAlgorithm::kAllPairs, bytes);
    return allPairsAllReduce(team, args, wait);
  } else if (hierarchy) {
    noteAlgorithm(team, wait, TunedCollective::kAllReduce, TunedAlgorithm::kHierarchical, bytes);
    return hierarchicalAllReduce(team, args, wait);
  } else {
    return largeMessage(TunedCollective::kAllReduce, team, args, wait, bytes, registeredAllReduce, directAllReduce,
                        ringAllReduce);
  }
}

Task<> allGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * loomTypeSize(args.dtype) * team.nranks;
  if (useLeaders(team) && fitsLeaderAllGather(team, args.count * loomTypeSize(args.dtype))) {
    noteAlgorithm(team, wait, TunedCollective::kAllGather, TunedAlgorithm::kHostLeaders, bytes);
    return leaderAllGather(team, args, wait);
  } else if (useHierarchy(team)) {
    noteAlgorithm(team, wait, TunedCollective::kAllGather, TunedAlgorithm::kHierarchical, bytes);
    return hierarchicalAllGather(team, args, wait);
  } else {
    return largeMessage(TunedCollective::kAllGather, team, args, wait, bytes, registeredAllGather, directAllGather,
                        ringAllGather);
  }
}

Task<> reduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * loomTypeSize(args.dtype) * team.nranks;
  if (useHierarchy(team)) {
    noteAlgorithm(team, wait, TunedCollective::kReduceScatter, TunedAlgorithm::kHierarchical, bytes);
    return hierarchicalReduceScatter(team, args, wait);
  } else {
    return largeMessage(TunedCollective::kReduceScatter, team, args, wait, bytes, registeredReduceScatter,
                        directReduceScatter, ringReduceScatter);
  }
}

// Trees for small messages (fewer hops), chains for large ones (every link
// busy once the pipeline fills).
bool useTree(const Team& team, size_t bytes) {
  if (team.nranks < 3) return false;  // with two ranks both are one hop
  switch (team.tuning.force) {
    case Tuning::Force::kTree: return true;
    case Tuning::Force::kAuto: return bytes <= team.tuning.treeMaxBytes;
    default: return false;
  }
}

Task<> broadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * loomTypeSize(args.dtype);
  const bool tree = useTree(team, bytes);
  noteAlgorithm(team, wait, TunedCollective::kBroadcast, tree ? TunedAlgorithm::kTree : TunedAlgorithm::kChain, bytes);
  if (tree)
    return treeBroadcast(team, args, wait);
  else
    return chainBroadcast(team, args, wait);
}

Task<> reduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * loomTypeSize(args.dtype);
  const bool tree = useTree(team, bytes);
  noteAlgorithm(team, wait, TunedCollective::kReduce, tree ? TunedAlgorithm::kTree : TunedAlgorithm::kChain, bytes);
  if (tree)
    return treeReduce(team, args, wait);
  else
    return chainReduce(team, args, wait);
}

Task<> barrier(const Team& team, const WaitContext& wait) {
  if (team.nranks == 1) return nothingToDo();
  const bool ring = team.tuning.force == Tuning::Force::kRing;
  noteAlgorithm(team, wait, TunedCollective::kBarrier, ring ? TunedAlgorithm::kRing : TunedAlgorithm::kAllPairs, 0);
  if (ring)
    return ringBarrier(team, wait);
  else
    return allPairsBarrier(team, wait);
}

}  // namespace loom

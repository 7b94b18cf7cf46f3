// Algorithm choice. Every input to the decision (sizes, rank count, the
// LOOM_ALGO setting, whether peers' memory is readable, which ranks agreed
// at init) is the same on every rank, so all ranks pick alike and their FIFOs
// stay in step.
#include "collectives/all_pairs.h"
#include "collectives/collectives.h"
#include "collectives/direct.h"
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
template <typename Registered, typename Direct, typename Ring>
void largeMessage(TunedCollective collective, const Team& team, const CollectiveArgs& args, const WaitContext& wait,
                  size_t bytes, Registered registered, Direct direct, Ring ring) {
  auto runDirect = [&](const std::vector<PeerBuffers>& peers) {
    logTuningChoice(team, collective, TunedAlgorithm::kDirect, bytes);
    direct(team, args, wait, peers);
  };
  auto runRing = [&] {
    logTuningChoice(team, collective, TunedAlgorithm::kRing, bytes);
    ring(team, args, wait);
  };
  if (lookForRegistered(team, bytes)) {
    std::vector<PeerBuffers> peers = swapAddresses(team, args, wait);
    if (registered(team, args, wait, peers)) {
      logTuningChoice(team, collective, TunedAlgorithm::kRegistered, bytes);
      return;
    }
    if (useDirect(team, bytes))
      runDirect(peers);
    else
      runRing();
  } else if (useDirect(team, bytes)) {
    runDirect(swapAddresses(team, args, wait));
  } else {
    runRing();
  }
}

using SwappedStep = void (*)(const Team&, const CollectiveArgs&, const WaitContext&, const std::vector<PeerBuffers>&);

}  // namespace

void allReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * loomTypeSize(args.dtype);
  const Tuning& tuning = team.tuning;
  bool allPairs = tuning.force == Tuning::Force::kAllPairs
                      ? fitsAllPairs(team, bytes, SIZE_MAX)
                      : tuning.force == Tuning::Force::kAuto && fitsAllPairs(team, bytes, tuning.allPairsMaxBytes);
  if (allPairs) {
    logTuningChoice(team, TunedCollective::kAllReduce, TunedAlgorithm::kAllPairs, bytes);
    allPairsAllReduce(team, args, wait);
  } else {
    largeMessage(TunedCollective::kAllReduce, team, args, wait, bytes, registeredAllReduce,
                 static_cast<SwappedStep>(directAllReduce), ringAllReduce);
  }
}

void allGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  largeMessage(TunedCollective::kAllGather, team, args, wait, args.count * loomTypeSize(args.dtype) * team.nranks,
               registeredAllGather,
               static_cast<SwappedStep>(directAllGather), ringAllGather);
}

void reduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  largeMessage(TunedCollective::kReduceScatter, team, args, wait,
               args.count * loomTypeSize(args.dtype) * team.nranks, registeredReduceScatter,
               static_cast<SwappedStep>(directReduceScatter), ringReduceScatter);
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

void broadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * loomTypeSize(args.dtype);
  const bool tree = useTree(team, bytes);
  logTuningChoice(team, TunedCollective::kBroadcast, tree ? TunedAlgorithm::kTree : TunedAlgorithm::kChain, bytes);
  if (tree)
    treeBroadcast(team, args, wait);
  else
    chainBroadcast(team, args, wait);
}

void reduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * loomTypeSize(args.dtype);
  const bool tree = useTree(team, bytes);
  logTuningChoice(team, TunedCollective::kReduce, tree ? TunedAlgorithm::kTree : TunedAlgorithm::kChain, bytes);
  if (tree)
    treeReduce(team, args, wait);
  else
    chainReduce(team, args, wait);
}

void barrier(const Team& team, const WaitContext& wait) {
  if (team.nranks == 1) return;
  const bool ring = team.tuning.force == Tuning::Force::kRing;
  logTuningChoice(team, TunedCollective::kBarrier, ring ? TunedAlgorithm::kRing : TunedAlgorithm::kAllPairs, 0);
  if (ring)
    ringBarrier(team, wait);
  else
    allPairsBarrier(team, wait);
}

}  // namespace loom

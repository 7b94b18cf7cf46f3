// Algorithm choice. Every input to the decision (sizes, rank count, the
// LOOM_ALGO setting, whether peers' memory is readable, which ranks agreed
// at init) is the same on every rank, so all ranks pick alike and their FIFOs
// stay in step.
#include "collectives/all_pairs.h"
#include "collectives/collectives.h"
#include "collectives/direct.h"

namespace loom {
namespace {

// `bytes` is the whole buffer, as nccl-tests' size column counts it.
bool useDirect(const Team& team, size_t bytes) {
  if (!directAvailable(team)) return false;
  switch (team.tuning.force) {
    case Tuning::Force::kDirect: return true;
    case Tuning::Force::kAuto: return bytes >= team.tuning.directMinBytes;
    default: return false;
  }
}

}  // namespace

void allReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * loomTypeSize(args.dtype);
  const Tuning& tuning = team.tuning;
  bool allPairs = tuning.force == Tuning::Force::kAllPairs
                      ? fitsAllPairs(team, bytes, SIZE_MAX)
                      : tuning.force == Tuning::Force::kAuto && fitsAllPairs(team, bytes, tuning.allPairsMaxBytes);
  if (allPairs)
    allPairsAllReduce(team, args, wait);
  else if (useDirect(team, bytes))
    directAllReduce(team, args, wait);
  else
    ringAllReduce(team, args, wait);
}

void allGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  if (useDirect(team, args.count * loomTypeSize(args.dtype) * team.nranks))
    directAllGather(team, args, wait);
  else
    ringAllGather(team, args, wait);
}

void reduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  if (useDirect(team, args.count * loomTypeSize(args.dtype) * team.nranks))
    directReduceScatter(team, args, wait);
  else
    ringReduceScatter(team, args, wait);
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
  if (useTree(team, args.count * loomTypeSize(args.dtype)))
    treeBroadcast(team, args, wait);
  else
    chainBroadcast(team, args, wait);
}

void reduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  if (useTree(team, args.count * loomTypeSize(args.dtype)))
    treeReduce(team, args, wait);
  else
    chainReduce(team, args, wait);
}

void barrier(const Team& team, const WaitContext& wait) {
  if (team.nranks == 1) return;
  if (team.tuning.force == Tuning::Force::kRing)
    ringBarrier(team, wait);
  else
    allPairsBarrier(team, wait);
}

}  // namespace loom

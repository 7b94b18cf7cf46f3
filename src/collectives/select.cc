// Algorithm choice. Every input to the decision (sizes, rank count, the
// LOOM_ALGO setting) is the same on every rank, so all ranks pick alike and
// their FIFOs stay in step.
#include "collectives/all_pairs.h"
#include "collectives/collectives.h"

namespace loom {

void allReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  const size_t bytes = args.count * loomTypeSize(args.dtype);
  const Tuning& tuning = team.tuning;
  bool allPairs = tuning.force == Tuning::Force::kAllPairs
                      ? fitsAllPairs(team, bytes, SIZE_MAX)
                      : tuning.force == Tuning::Force::kAuto && fitsAllPairs(team, bytes, tuning.allPairsMaxBytes);
  if (allPairs)
    allPairsAllReduce(team, args, wait);
  else
    ringAllReduce(team, args, wait);
}

void barrier(const Team& team, const WaitContext& wait) {
  if (team.nranks == 1) return;
  if (team.tuning.force == Tuning::Force::kRing)
    ringBarrier(team, wait);
  else
    allPairsBarrier(team, wait);
}

}  // namespace loom

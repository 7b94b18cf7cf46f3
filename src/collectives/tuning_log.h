// LOOM_DEBUG=INFO LOOM_DEBUG_SUBSYS=TUNING: which algorithm each collective
// took, and why, the first time it takes it in this process. One line per
// (collective, algorithm) pair, so a sweep over sizes shows where each
// threshold falls without a line per call.
#pragma once

#include <cstddef>

#include "collectives/algorithm_table.h"
#include "collectives/collectives.h"

namespace loom {

// Notes the algorithm in the operation's flight-recorder entry
// (wait.algorithm) and logs it the first time. Cheap when TUNING is not
// logged: one check of the log settings. `unregistered`: the swapped
// addresses showed some rank's buffers unregistered, and the algorithm is
// what the model picks without registered buffers (select.cc).
void noteAlgorithm(const Team& team, const WaitContext& wait, TunedCollective collective, TunedAlgorithm algorithm,
                   size_t bytes, bool unregistered = false);

}  // namespace loom

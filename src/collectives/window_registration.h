// loomCommRegister and loomCommDeregister as collective operations: ranks
// swap their offers through the FIFOs, map each other's buffers, and agree
// that every rank succeeded before any of them records the window. So every
// rank always holds the same windows (peer_windows.h), which the
// single-copy algorithms (registered.h) rely on to decide alike.
#pragma once

#include <cstdint>
#include <optional>

#include "base/error.h"
#include "collectives/collectives.h"
#include "transport/regions.h"

namespace loom {

// Records `mine` and every peer's offer in team.windows, or on every rank
// returns the same error (a rank that cannot map a peer's memory) and
// records nothing. The FIFOs stay in step either way.
Task<std::optional<Error>> registerWindow(const Team& team, RegionOffer mine, const WaitContext& wait);

// Removes `window` on every rank, or, if a rank passed another window or
// one it does not have, returns the same error on every rank and removes
// nothing.
Task<std::optional<Error>> deregisterWindow(const Team& team, uint64_t window, const WaitContext& wait);

}  // namespace loom

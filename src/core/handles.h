// The communicator behind a C handle, for Loom's own tests and tools that
// look inside (which algorithm ran, what is registered). Not part of the
// API: frameworks use include/loom/loom.h only.
#pragma once

#include <loom/loom.h>

#include <memory>

#include "core/communicator.h"

namespace loom {

// Throws loom::Error for a NULL, destroyed or unknown handle.
std::shared_ptr<Communicator> communicatorOf(loomComm_t comm);

}  // namespace loom

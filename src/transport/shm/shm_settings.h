// Shared memory's own settings: its FIFOs' shape (LOOM_SHM_SLOT_BYTES,
// LOOM_SHM_SLOTS) and whether to try single-copy reads of peers' memory
// (LOOM_CMA).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "transport/registry.h"

namespace loom::shm {

struct ShmSettings final : KindSettings {
  size_t slotBytes = 128 * 1024;
  int slots = 8;
  bool crossMemoryAttach = false;

  std::string agreement() const override;
  SlotShape slotShape() const override { return {slots, slotBytes}; }
};

// The registry's entry: throws loomInvalidArgument naming a malformed variable.
std::shared_ptr<const KindSettings> readSettings();

}  // namespace loom::shm

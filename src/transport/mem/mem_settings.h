// The in-memory transport's own settings: its FIFOs' shape
// (LOOM_MEM_SLOT_BYTES, LOOM_MEM_SLOTS), the delay injected into every
// message (LOOM_MEM_DELAY_US), and how peers reach registered buffers
// (LOOM_MEM_REGIONS), for tests that run ranks as threads of one process
// through the C API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "transport/registry.h"

namespace loom::mem {

struct MemSettings final : KindSettings {
  size_t slotBytes = 64 * 1024;
  int slots = 4;
  int64_t maxDelayMicros = 0;  // each message waits up to this long before its receiver sees it
  bool postedRegions = false;  // registered buffers reached only by posted transfers (LOOM_MEM_REGIONS=posted)

  std::string agreement() const override;
  SlotShape slotShape() const override { return {slots, slotBytes}; }
};

// The registry's entry: throws loomInvalidArgument naming a malformed variable.
std::shared_ptr<const KindSettings> readSettings();

}  // namespace loom::mem

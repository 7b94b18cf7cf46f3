#include "transport/mem/mem_settings.h"

#include "base/env_value.h"
#include "base/error.h"

namespace loom::mem {

std::string MemSettings::agreement() const {
  return "LOOM_MEM_SLOTS=" + std::to_string(slots) + " LOOM_MEM_SLOT_BYTES=" + std::to_string(slotBytes) +
         " LOOM_MEM_DELAY_US=" + std::to_string(maxDelayMicros) +
         " LOOM_MEM_REGIONS=" + (postedRegions ? "posted" : "mapped");
}

std::shared_ptr<const KindSettings> readSettings() {
  auto settings = std::make_shared<MemSettings>();
  readSlotBytes("LOOM_MEM_SLOT_BYTES", &settings->slotBytes);
  if (auto slots = envValue("LOOM_MEM_SLOTS"))
    settings->slots = static_cast<int>(parseEnvInteger(*slots, "LOOM_MEM_SLOTS", 2, 1024));
  if (auto delay = envValue("LOOM_MEM_DELAY_US"))
    settings->maxDelayMicros = parseEnvInteger(*delay, "LOOM_MEM_DELAY_US", 0, 1000000);
  if (auto regions = envValue("LOOM_MEM_REGIONS")) {
    if (*regions != "mapped" && *regions != "posted")
      fail(loomInvalidArgument, "LOOM_MEM_REGIONS='" + *regions + "' is not mapped or posted");
    settings->postedRegions = *regions == "posted";
  }
  return settings;
}

}  // namespace loom::mem

#include "transport/shm/shm_settings.h"

#include "base/env_value.h"
#include "base/error.h"

namespace loom::shm {

std::string ShmSettings::agreement() const {
  return "LOOM_SHM_SLOTS=" + std::to_string(slots) + " LOOM_SHM_SLOT_BYTES=" + std::to_string(slotBytes);
}

std::shared_ptr<const KindSettings> readSettings() {
  auto settings = std::make_shared<ShmSettings>();
  readSlotBytes("LOOM_SHM_SLOT_BYTES", &settings->slotBytes);
  if (auto slots = envValue("LOOM_SHM_SLOTS"))
    settings->slots = static_cast<int>(parseEnvInteger(*slots, "LOOM_SHM_SLOTS", 2, 1024));
  if (auto cma = envValue("LOOM_CMA")) {
    if (*cma != "0" && *cma != "1") fail(loomInvalidArgument, "LOOM_CMA='" + *cma + "' is not 0 or 1");
    settings->crossMemoryAttach = *cma == "1";
  }
  return settings;
}

}  // namespace loom::shm

// NVML, loaded with dlopen so Loom neither links nor needs the NVIDIA
// driver: NVLink peers of each GPU and the driver/NVML versions.
#pragma once

#include <string>
#include <vector>

namespace loom::topo {

struct NvlinkPeer {
  std::string gpuBusId;     // canonical "0000:17:00.0"
  std::string remoteBusId;  // a GPU, an NVSwitch or a CPU (POWER9)
  int lanes = 0;            // active links between the two
};

struct NvmlInfo {
  bool loaded = false;       // libnvidia-ml.so.1 found and initialised
  std::string driverVersion;  // "550.54.15"
  std::string nvmlVersion;
  int cudaDriverVersion = 0;  // 12040 for 12.4
  std::vector<NvlinkPeer> peers;
};

// Empty (loaded = false) on machines without the driver; never throws.
NvmlInfo probeNvml();

}  // namespace loom::topo

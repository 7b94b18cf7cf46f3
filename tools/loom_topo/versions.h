// The software stack around Loom, for loom-topo's first lines: most
// "Loom misreads my machine" reports start with a driver or library version.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace loom::topo {

struct IbDevice {
  std::string name;      // "mlx5_0"
  std::string firmware;  // "20.31.1014"
};

struct Versions {
  std::vector<std::pair<std::string, std::string>> items;  // ("hwloc", "2.9.0"), ...
  std::vector<IbDevice> ibDevices;
};

// Everything found; libraries that are absent read "not found". Optional
// libraries (CUDA, NVML, ibverbs) are loaded with dlopen, never linked.
Versions collectVersions();

}  // namespace loom::topo

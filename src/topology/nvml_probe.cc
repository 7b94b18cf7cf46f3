#include "topology/nvml_probe.h"

#include <dlfcn.h>

#include <cstring>
#include <map>

#include "topology/pci.h"

namespace loom::topo {

namespace {

// The few NVML declarations Loom needs, declared to match nvml.h (NVML keeps
// this ABI stable), so that building Loom needs no CUDA toolkit.
using nvmlDevice_t = void*;
using nvmlReturn_t = int;
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
constexpr unsigned kMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS

struct Nvml {
  void* lib = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*pciInfo)(nvmlDevice_t, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*linkState)(nvmlDevice_t, unsigned, int*) = nullptr;
  nvmlReturn_t (*remotePci)(nvmlDevice_t, unsigned, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*driverVersion)(char*, unsigned) = nullptr;
  nvmlReturn_t (*nvmlVersion)(char*, unsigned) = nullptr;
  nvmlReturn_t (*cudaVersion)(int*) = nullptr;

  template <typename F>
  void bind(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
  }
  bool open() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return false;
    bind(init, "nvmlInit_v2");
    bind(shutdown, "nvmlShutdown");
    bind(count, "nvmlDeviceGetCount_v2");
    bind(handle, "nvmlDeviceGetHandleByIndex_v2");
    bind(pciInfo, "nvmlDeviceGetPciInfo_v3");
    bind(linkState, "nvmlDeviceGetNvLinkState");
    bind(remotePci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    bind(driverVersion, "nvmlSystemGetDriverVersion");
    bind(nvmlVersion, "nvmlSystemGetNVMLVersion");
    bind(cudaVersion, "nvmlSystemGetCudaDriverVersion");
    return init && shutdown && count && handle && pciInfo && init() == 0;
  }
  ~Nvml() {
    if (lib) dlclose(lib);
  }
};

// NVML writes "00000000:17:00.0"; Loom's canonical form has a 4-digit domain.
std::string canonical(const nvmlPciInfo_t& p) {
  std::string id(p.busId, strnlen(p.busId, sizeof(p.busId)));  // a driver need not terminate it
  if (id.size() > 12) id = id.substr(id.size() - 12);
  auto n = normalizeBusId(id);
  return n ? *n : id;
}

void probePeers(Nvml& nvml, NvmlInfo& info) {
  unsigned n = 0;
  if (nvml.count(&n) != 0 || !nvml.linkState || !nvml.remotePci) return;
  for (unsigned i = 0; i < n; i++) {
    nvmlDevice_t dev;
    nvmlPciInfo_t self{};
    if (nvml.handle(i, &dev) != 0 || nvml.pciInfo(dev, &self) != 0) continue;
    std::map<std::string, int> lanes;
    for (unsigned l = 0; l < kMaxLinks; l++) {
      int active = 0;
      nvmlPciInfo_t remote{};
      if (nvml.linkState(dev, l, &active) != 0 || !active) continue;
      if (nvml.remotePci(dev, l, &remote) == 0) lanes[canonical(remote)]++;
    }
    for (const auto& [remote, count] : lanes) info.peers.push_back(NvlinkPeer{canonical(self), remote, count});
  }
}

}  // namespace

NvmlInfo probeNvml() {
  NvmlInfo info;
  Nvml nvml;
  if (!nvml.open()) return info;
  info.loaded = true;
  char buf[96] = {};
  if (nvml.driverVersion && nvml.driverVersion(buf, sizeof(buf)) == 0) info.driverVersion = buf;
  if (nvml.nvmlVersion && nvml.nvmlVersion(buf, sizeof(buf)) == 0) info.nvmlVersion = buf;
  if (nvml.cudaVersion) nvml.cudaVersion(&info.cudaDriverVersion);
  probePeers(nvml, info);
  nvml.shutdown();
  return info;
}

}  // namespace loom::topo

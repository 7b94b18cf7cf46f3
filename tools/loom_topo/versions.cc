#include "loom_topo/versions.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <sys/utsname.h>

#include <loom/loom.h>

#include "topology/hwloc_import.h"
#include "topology/nvml_probe.h"

#if __has_include(<infiniband/verbs.h>)
#include <infiniband/verbs.h>
#define LOOM_TOPO_HAVE_VERBS_H 1
#endif

namespace loom::topo {

namespace {

// "12040" -> "12.4", as CUDA encodes its versions.
std::string cudaVersionString(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// cuDriverGetVersion / cudaRuntimeGetVersion share one signature.
std::string dlVersion(const char* const* libs, const char* symbol) {
  for (const char* const* lib = libs; *lib; lib++) {
    void* h = dlopen(*lib, RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) continue;
    auto fn = reinterpret_cast<int (*)(int*)>(dlsym(h, symbol));
    int v = 0;
    std::string out = fn && fn(&v) == 0 && v > 0 ? cudaVersionString(v) : "present, version unknown";
    dlclose(h);
    return out;
  }
  return "not found";
}

std::vector<IbDevice> ibDevices() {
  std::vector<IbDevice> out;
#ifdef LOOM_TOPO_HAVE_VERBS_H
  void* h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return out;
  auto getList = reinterpret_cast<ibv_device** (*)(int*)>(dlsym(h, "ibv_get_device_list"));
  auto freeList = reinterpret_cast<void (*)(ibv_device**)>(dlsym(h, "ibv_free_device_list"));
  auto getName = reinterpret_cast<const char* (*)(ibv_device*)>(dlsym(h, "ibv_get_device_name"));
  auto open = reinterpret_cast<ibv_context* (*)(ibv_device*)>(dlsym(h, "ibv_open_device"));
  auto close = reinterpret_cast<int (*)(ibv_context*)>(dlsym(h, "ibv_close_device"));
  auto query = reinterpret_cast<int (*)(ibv_context*, ibv_device_attr*)>(dlsym(h, "ibv_query_device"));
  int n = 0;
  ibv_device** list = getList && freeList && getName ? getList(&n) : nullptr;
  for (int i = 0; list && i < n; i++) {
    IbDevice dev{getName(list[i]), "unknown"};
    ibv_context* ctx = open && close && query ? open(list[i]) : nullptr;
    ibv_device_attr attr{};
    if (ctx && query(ctx, &attr) == 0) dev.firmware = attr.fw_ver;
    if (ctx) close(ctx);
    out.push_back(dev);
  }
  if (list) freeList(list);
  dlclose(h);
#endif
  return out;
}

}  // namespace

Versions collectVersions() {
  Versions v;
  v.items.emplace_back("Loom", LOOM_VERSION_STRING);
  v.items.emplace_back("hwloc", hwlocRuntimeVersion());
  utsname u{};
  if (uname(&u) == 0) v.items.emplace_back("kernel", std::string(u.sysname) + " " + u.release + " " + u.machine);
  v.items.emplace_back("glibc", gnu_get_libc_version());
  static const char* const kDriver[] = {"libcuda.so.1", nullptr};
  static const char* const kRuntime[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", nullptr};
  v.items.emplace_back("CUDA driver", dlVersion(kDriver, "cuDriverGetVersion"));
  v.items.emplace_back("CUDA runtime", dlVersion(kRuntime, "cudaRuntimeGetVersion"));
  NvmlInfo nvml = probeNvml();
  v.items.emplace_back("NVML", nvml.loaded ? nvml.nvmlVersion + " (driver " + nvml.driverVersion + ")" : "not found");
  v.ibDevices = ibDevices();
  v.items.emplace_back("ibverbs devices", v.ibDevices.empty() ? "none" : std::to_string(v.ibDevices.size()));
  return v;
}

}  // namespace loom::topo

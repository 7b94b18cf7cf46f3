#include "topology/hwloc_import.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "base/error.h"
#include "base/logging.h"
#include "topology/hwloc_internal.h"
#include "topology/hwloc_xml_precheck.h"
#include "topology/nvml_probe.h"
#include "topology/paths.h"

namespace loom::topo {

namespace {

// hwloc loads its plugins (dlopen) with the first topology and unloads them
// when the last one is destroyed; its libxml2 plugin leaves libxml2's global
// error handler pointing into the unloaded code, so the next libxml2 error in
// the process (Loom's XmlDoc, or the application's own) would jump there.
// One topology that lives as long as the process keeps the plugins loaded.
// Held in a volatile static so the store survives optimisation: without it
// g++ -O1 drops the never-read pointer and LeakSanitizer sees a leak.
void keepHwlocPluginsLoaded() {
  static hwloc_topology_t volatile keep = [] {
    hwloc_topology_t k = nullptr;
    hwloc_topology_init(&k);
    return k;
  }();
  (void)keep;
}

// Owns an hwloc topology for the length of one import.
class HwlocHandle {
 public:
  HwlocHandle() {
    keepHwlocPluginsLoaded();
    hwloc_topology_init(&h_);
    // Bridges must survive filtering: they are the PCI switches.
    hwloc_topology_set_io_types_filter(h_, HWLOC_TYPE_FILTER_KEEP_ALL);
  }
  ~HwlocHandle() { hwloc_topology_destroy(h_); }
  HwlocHandle(const HwlocHandle&) = delete;
  HwlocHandle& operator=(const HwlocHandle&) = delete;
  hwloc_topology_t get() const { return h_; }

 private:
  hwloc_topology_t h_;
};

std::unique_ptr<Topology> build(hwloc_topology_t h, std::string source) {
  auto t = std::make_unique<Topology>();
  t->source = std::move(source);
  t->hwlocVersion = hwlocRuntimeVersion();
  t->hostname = detail::infoValue(hwloc_get_root_obj(h), "HostName");
  detail::importCpus(h, *t);
  detail::importPci(h, *t);
  t->finish();
  return t;
}

bool hasNvlink(const Topology& t) {
  for (const Link& l : t.links) {
    if (l.kind == LinkKind::kNvLink) return true;
  }
  return false;
}

}  // namespace

void addNvmlLinks(Topology& t, const NvmlInfo& nvml) {
  for (const NvlinkPeer& p : nvml.peers) {
    int a = t.findBusId(p.gpuBusId), b = t.findBusId(p.remoteBusId);
    if (a < 0 || b < 0) {
      LOOM_INFO("INIT", -1, "NVLink from " << p.gpuBusId << " to " << p.remoteBusId << " ignored: not in the PCI tree");
      continue;
    }
    if (a > b && t.nodes[b].kind == NodeKind::kGpu) continue;  // seen from the other GPU already
    double bw = p.lanes * nvlinkGBsPerLane(t.nodes[a].sm);
    t.addLink(a, b, LinkKind::kNvLink, bw, kNvlLatencyUs, p.lanes);
  }
}

std::string hwlocRuntimeVersion() {
  // hwloc has no call for its release (HWLOC_API_VERSION stays 2.8.0 for
  // 2.9.x), but every load stamps it into the root object; a one-PU
  // synthetic topology costs microseconds.
  static const std::string version = [] {
    HwlocHandle h;
    std::string v;
    if (hwloc_topology_set_synthetic(h.get(), "pu:1") == 0 && hwloc_topology_load(h.get()) == 0) {
      v = detail::infoValue(hwloc_get_root_obj(h.get()), "hwlocVersion");
    }
    if (v.empty()) {
      unsigned api = hwloc_get_api_version();
      char buf[48];
      std::snprintf(buf, sizeof(buf), "API %u.%u.%u", api >> 16, (api >> 8) & 0xff, api & 0xff);
      v = buf;
    }
    return v;
  }();
  return version;
}

std::unique_ptr<Topology> detectTopology() {
  HwlocHandle h;
  if (hwloc_topology_load(h.get()) != 0) failSystem("hwloc could not detect this machine's topology", errno);
  auto t = build(h.get(), "hwloc detection");
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  t->hostname = host;
  // NVML knows NVLink that hwloc (without its NVML plugin) does not.
  if (!t->gpus().empty() && !hasNvlink(*t)) addNvmlLinks(*t, probeNvml());
  return t;
}

std::unique_ptr<Topology> importHwlocXml(const std::string& path) {
  XmlDoc doc(path);
  return importHwlocXml(doc);
}

std::unique_ptr<Topology> importHwlocXml(const XmlDoc& doc) {
  // What would crash hwloc's importer is refused here, with its line.
  precheckHwlocXml(doc);
  const std::string& path = doc.path();
  HwlocHandle h;
  if (hwloc_topology_set_xml(h.get(), path.c_str()) != 0 || hwloc_topology_load(h.get()) != 0) {
    fail(loomInvalidArgument, path + ": hwloc " + hwlocRuntimeVersion() +
                                  " could not import this hwloc XML (it imports formats 1.x and 2.x)");
  }
  return build(h.get(), "hwloc XML " + path);
}

}  // namespace loom::topo

// I/O side of an hwloc topology: the devices Loom cares about (GPUs, NICs,
// NVSwitches), the PCI switches above them, and NVLink.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

#include "topology/hwloc_internal.h"
#include "topology/paths.h"
#include "topology/pci.h"

namespace loom::topo::detail {

namespace {

using PciAttr = hwloc_obj_attr_u::hwloc_pcidev_attr_s;

std::string busIdOf(const PciAttr& pci) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%01x", pci.domain, pci.bus, pci.dev, pci.func);
  return buf;
}

bool isPciToPciBridge(hwloc_obj_t obj) {
  return obj != nullptr && obj->type == HWLOC_OBJ_BRIDGE && obj->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
}

bool hasOsDev(hwloc_obj_t pcidev, hwloc_obj_osdev_type_t type) {
  for (hwloc_obj_t c = pcidev->io_first_child; c != nullptr; c = c->next_sibling) {
    if (c->type == HWLOC_OBJ_OS_DEVICE && c->attr->osdev.type == type) return true;
  }
  return false;
}

NodeKind classify(hwloc_obj_t obj) {
  const PciAttr& p = obj->attr->pcidev;
  int32_t cls = static_cast<int32_t>(p.class_id) << 8;
  bool nvswitch = (obj->subtype != nullptr && std::string(obj->subtype) == "NVSwitch") ||
                  (isNvSwitchClass(cls) && p.vendor_id == kNvidiaVendor);
  if (nvswitch) return NodeKind::kNvSwitch;
  if (isDisplayClass(cls) && p.vendor_id == kNvidiaVendor) return NodeKind::kGpu;
  if (isNetworkClass(cls) || hasOsDev(obj, HWLOC_OBJ_OSDEV_OPENFABRICS)) return NodeKind::kNic;
  return NodeKind::kPciDevice;  // not imported
}

PciInfo pciInfo(const PciAttr& p) {
  PciInfo info;
  info.busId = busIdOf(p);
  info.classCode = static_cast<int32_t>(p.class_id) << 8;
  info.vendor = p.vendor_id;
  info.device = p.device_id;
  info.subVendor = p.subvendor_id;
  info.subDevice = p.subdevice_id;
  pciSpeedFromRawGBs(p.linkspeed, &info.linkSpeed, &info.linkWidth);
  return info;
}

double pciLinkGBs(const PciInfo& info) {
  double bw = pciUsableGBs(info.linkSpeed, info.linkWidth);
  return bw > 0 ? bw : 24.0;  // unknown: assume Gen4 x16
}

// The CPU node of the NUMA node nearest the device's host bridge.
int localCpuNode(hwloc_topology_t h, Topology& t, hwloc_obj_t obj) {
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(h, obj);
  int first = anc ? hwloc_bitmap_first(anc->nodeset) : -1;
  int cpu = t.cpuNodeOfNuma(first);
  return cpu >= 0 ? cpu : t.cpuNodes().front();
}

// NCCL walks sysfs two levels at a time, so a switch is its upstream port
// and the downstream port below it (and a lone root port) vanish. Doing the
// same gives the PIX/PXB answers NCCL and nvidia-smi give.
std::vector<hwloc_obj_t> switchesAbove(hwloc_obj_t dev) {
  std::vector<hwloc_obj_t> bridges;
  for (hwloc_obj_t p = dev->parent; isPciToPciBridge(p); p = p->parent) bridges.push_back(p);
  std::vector<hwloc_obj_t> switches;
  for (size_t i = 1; i < bridges.size(); i += 2) switches.push_back(bridges[i]);
  return {switches.rbegin(), switches.rend()};  // from the CPU down
}

int addPciNode(Topology& t, Node node) {
  double bw = pciLinkGBs(node.pci);
  int parent = node.parent;
  int id = t.addNode(std::move(node));
  t.addLink(id, parent, LinkKind::kPci, bw, kPciLatencyUs);
  return id;
}

int switchNode(Topology& t, hwloc_obj_t bridge, int parent) {
  PciInfo info = pciInfo(bridge->attr->bridge.upstream.pci);
  // hwloc's object type says bridge whatever pci_type's class says (an
  // edited file can say 0x0000); NCCL XML decides by class, so the dump
  // writes the PCI-to-PCI bridge class such an object is.
  if (!isBridgeClass(info.classCode)) info.classCode = 0x060400;
  int found = t.findBusId(info.busId);
  if (found >= 0) return found;
  Node sw;
  sw.kind = NodeKind::kPciSwitch;
  sw.pci = info;
  sw.parent = parent;
  return addPciNode(t, std::move(sw));
}

void describeDevice(hwloc_obj_t obj, Node& node) {
  for (hwloc_obj_t c = obj->io_first_child; c != nullptr; c = c->next_sibling) {
    if (c->type != HWLOC_OBJ_OS_DEVICE) continue;
    std::string model = infoValue(c, "GPUModel");
    if (!model.empty()) node.model = model;
    if (node.kind != NodeKind::kNic) continue;
    bool ofed = c->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS;
    if (!ofed && c->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK) continue;
    NetPort port;
    port.name = c->name ? c->name : "";
    // The RDMA device names the NIC (mlx5_0), as NCCL and nvidia-smi do.
    node.nets.insert(ofed ? node.nets.begin() : node.nets.end(), port);
    node.rdma = node.rdma || ofed;
  }
}

void importDevice(hwloc_topology_t h, Topology& t, hwloc_obj_t obj, NodeKind kind) {
  int parent = localCpuNode(h, t, obj);
  for (hwloc_obj_t sw : switchesAbove(obj)) parent = switchNode(t, sw, parent);
  Node node;
  node.kind = kind;
  node.pci = pciInfo(obj->attr->pcidev);
  if (kind == NodeKind::kNvSwitch && node.pci.classCode <= 0) node.pci.classCode = 0x068000;
  node.parent = parent;
  describeDevice(obj, node);
  addPciNode(t, std::move(node));
}

// hwloc's NVLinkBandwidth matrix holds GPU OS devices and NVSwitch PCI
// devices; values are MB/s, one NVLink lane carrying 20-25 GB/s.
int nodeOfNvlinkObject(const Topology& t, hwloc_obj_t obj) {
  while (obj != nullptr && obj->type != HWLOC_OBJ_PCI_DEVICE) obj = obj->parent;
  return obj ? t.findBusId(busIdOf(obj->attr->pcidev)) : -1;
}

void importNvlinks(hwloc_topology_t h, Topology& t) {
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_name(h, "NVLinkBandwidth", &nr, &dist, 0) != 0 || nr == 0) return;
  unsigned n = dist->nbobjs;
  for (unsigned i = 0; i < n; i++) {
    for (unsigned j = i + 1; j < n; j++) {
      uint64_t mbs = dist->values[i * n + j];
      int a = nodeOfNvlinkObject(t, dist->objs[i]), b = nodeOfNvlinkObject(t, dist->objs[j]);
      if (mbs == 0 || a < 0 || b < 0 || a == b) continue;
      // Clamped: a file's matrix may hold any 64-bit value.
      int lanes = static_cast<int>(std::clamp<long>(std::lround(mbs / 25000.0), 1, INT_MAX));
      int sm = std::max(t.nodes[a].sm, t.nodes[b].sm);
      t.addLink(a, b, LinkKind::kNvLink, lanes * nvlinkGBsPerLane(sm), kNvlLatencyUs, lanes);
    }
  }
  hwloc_distances_release(h, dist);
}

}  // namespace

void importPci(hwloc_topology_t h, Topology& t) {
  hwloc_obj_t obj = nullptr;
  while ((obj = hwloc_get_next_pcidev(h, obj)) != nullptr) {
    NodeKind kind = classify(obj);
    if (kind != NodeKind::kPciDevice) importDevice(h, t, obj, kind);
  }
  importNvlinks(h, t);
}

}  // namespace loom::topo::detail

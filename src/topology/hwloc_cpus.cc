// CPU side of an hwloc topology: NUMA nodes, packages, PUs, caches and
// NUMA distances.
#include <algorithm>
#include <limits>
#include <set>
#include <vector>

#include "topology/hwloc_internal.h"
#include "topology/int_text.h"

namespace loom::topo::detail {

namespace {

int ancestorIndex(hwloc_topology_t h, hwloc_obj_type_t type, hwloc_obj_t obj, bool os) {
  hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(h, type, obj);
  if (a == nullptr) return -1;
  return os ? static_cast<int>(a->os_index) : static_cast<int>(a->logical_index);
}

// The first package under or above a NUMA node: packages usually hold NUMA
// nodes, but glued machines (IBM x3950) put several packages in one node.
int packageOfNuma(hwloc_topology_t h, hwloc_obj_t numa) {
  int p = ancestorIndex(h, HWLOC_OBJ_PACKAGE, numa, false);
  if (p >= 0) return p;
  hwloc_obj_t inside = hwloc_get_next_obj_inside_cpuset_by_type(h, numa->cpuset, HWLOC_OBJ_PACKAGE, nullptr);
  if (inside != nullptr) return static_cast<int>(inside->logical_index);
  return hwloc_get_nbobjs_by_type(h, HWLOC_OBJ_PACKAGE) > 0 ? -1 : 0;
}

void addCpuIdentity(hwloc_topology_t h, Node& node, hwloc_obj_t numa) {
  node.arch = infoValue(hwloc_get_root_obj(h), "Architecture");
  hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_PACKAGE, numa);
  if (pkg == nullptr) pkg = hwloc_get_next_obj_inside_cpuset_by_type(h, numa->cpuset, HWLOC_OBJ_PACKAGE, nullptr);
  if (pkg == nullptr) return;
  node.vendor = infoValue(pkg, "CPUVendor");
  // A file's values were checked before hwloc saw them (hwloc_xml_precheck.cc);
  // one detection cannot parse stays unknown (-1).
  node.familyId = parseDecimalInt(infoValue(pkg, "CPUFamilyNumber")).value_or(-1);
  node.modelId = parseDecimalInt(infoValue(pkg, "CPUModelNumber")).value_or(-1);
}

// The NUMA id (NCCL's numaid) of each NUMA node, by hwloc logical index: its
// OS index, or, where an XML file gives none hwloc can use (absent, beyond
// int, or one an earlier node has), the lowest id no node uses, so that every
// <cpu> of the dump has a numaid the NCCL reader accepts.
std::vector<int> numaIds(hwloc_topology_t h) {
  std::vector<hwloc_obj_t> objs;
  hwloc_obj_t numa = nullptr;
  while ((numa = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_NUMANODE, numa)) != nullptr) objs.push_back(numa);
  std::vector<int> ids(objs.size(), -1);
  std::set<int> used;
  for (size_t i = 0; i < objs.size(); i++) {
    unsigned os = objs[i]->os_index;
    if (os <= static_cast<unsigned>(std::numeric_limits<int>::max()) && used.insert(static_cast<int>(os)).second) {
      ids[i] = static_cast<int>(os);
    }
  }
  int free = 0;
  for (int& id : ids) {
    if (id >= 0) continue;
    while (used.count(free)) free++;
    id = free;
    used.insert(free);
  }
  return ids;
}

// hwloc gives a memory-only NUMA node (KNL's MCDRAM, Sapphire Rapids' HBM,
// CXL memory) the CPUs of the package it hangs from, which the package's
// DRAM node already has; Linux lists no CPUs for such a node, and neither
// does Loom: each CPU belongs to the first NUMA node whose cpuset holds it.
// A dump's <cpu> affinities then never overlap, which the NCCL XML reader
// requires (two owners would make a CPU's NUMA node ambiguous).
std::vector<int> importNumaNodes(hwloc_topology_t h, Topology& t) {
  std::vector<int> ids = numaIds(h);
  std::set<int> claimed;
  hwloc_obj_t numa = nullptr;
  for (size_t i = 0; (numa = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_NUMANODE, numa)) != nullptr; i++) {
    Node node;
    node.kind = NodeKind::kCpu;
    node.numa = ids[i];
    node.package = packageOfNuma(h, numa);
    node.memoryBytes = numa->attr->numanode.local_memory;
    unsigned cpu;
    hwloc_bitmap_foreach_begin(cpu, numa->cpuset) {
      if (claimed.insert(static_cast<int>(cpu)).second) node.cpus.push_back(static_cast<int>(cpu));
    }
    hwloc_bitmap_foreach_end();
    addCpuIdentity(h, node, numa);
    t.addNode(std::move(node));
  }
  return ids;
}

void importPus(hwloc_topology_t h, Topology& t) {
  hwloc_obj_t pu = nullptr;
  while ((pu = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_PU, pu)) != nullptr) {
    Pu p;
    p.os = static_cast<int>(pu->os_index);
    int core = ancestorIndex(h, HWLOC_OBJ_CORE, pu, false);
    p.core = core >= 0 ? core : p.os;
    p.package = ancestorIndex(h, HWLOC_OBJ_PACKAGE, pu, false);
    for (const Node& n : t.nodes) {
      if (n.kind != NodeKind::kCpu) continue;
      for (int c : n.cpus) {
        if (c == p.os && p.numa < 0) p.numa = n.numa;
      }
      if (p.package < 0 && p.numa == n.numa) p.package = n.package;
    }
    t.pus.push_back(p);
  }
}

void importCaches(hwloc_topology_t h, Topology& t) {
  for (int d = 0; d < hwloc_topology_get_depth(h); d++) {
    hwloc_obj_t obj = hwloc_get_obj_by_depth(h, d, 0);
    if (obj == nullptr || !hwloc_obj_type_is_cache(obj->type)) continue;
    const char* type = obj->attr->cache.type == HWLOC_OBJ_CACHE_DATA          ? "d"
                       : obj->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION ? "i"
                                                                              : "";
    CacheLevel level;
    level.level = static_cast<int>(obj->attr->cache.depth);
    level.type = type;
    level.bytes = obj->attr->cache.size;
    level.count = hwloc_get_nbobjs_by_depth(h, d);
    t.caches.push_back(level);
  }
  std::stable_sort(t.caches.begin(), t.caches.end(), [](const CacheLevel& x, const CacheLevel& y) {
    return x.level != y.level ? x.level < y.level : x.type < y.type;
  });
}

// hwloc 2.x files name the matrix NUMALatency; 1.x imports leave it unnamed.
void importNumaDistances(hwloc_topology_t h, Topology& t, const std::vector<int>& numaIds) {
  unsigned nr = 1;
  hwloc_distances_s* dist = nullptr;
  if (hwloc_distances_get_by_type(h, HWLOC_OBJ_NUMANODE, &nr, &dist, HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 ||
      nr == 0) {
    return;
  }
  std::vector<int> cpus = t.cpuNodes();
  std::vector<int> pos(dist->nbobjs, -1);  // matrix index -> position in cpus
  for (unsigned i = 0; i < dist->nbobjs; i++) {
    for (size_t c = 0; c < cpus.size(); c++) {
      unsigned logical = dist->objs[i]->logical_index;
      if (logical < numaIds.size() && t.nodes[cpus[c]].numa == numaIds[logical]) pos[i] = static_cast<int>(c);
    }
  }
  t.numaDistances.assign(cpus.size(), std::vector<uint64_t>(cpus.size(), 0));
  for (unsigned i = 0; i < dist->nbobjs; i++) {
    for (unsigned j = 0; j < dist->nbobjs; j++) {
      if (pos[i] >= 0 && pos[j] >= 0) t.numaDistances[pos[i]][pos[j]] = dist->values[i * dist->nbobjs + j];
    }
  }
  hwloc_distances_release(h, dist);
}

}  // namespace

std::string infoValue(hwloc_obj_t obj, const char* name) {
  const char* v = hwloc_obj_get_info_by_name(obj, name);
  return v ? v : "";
}

void importCpus(hwloc_topology_t h, Topology& t) {
  std::vector<int> numaIds = importNumaNodes(h, t);
  importPus(h, t);
  t.finish();  // CPU node order, used by the distance matrix
  importCaches(h, t);
  importNumaDistances(h, t, numaIds);
}

}  // namespace loom::topo::detail

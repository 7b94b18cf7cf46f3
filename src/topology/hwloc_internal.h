// The two halves of reading an hwloc topology into the graph, shared by
// live detection and hwloc XML import.
#pragma once

#include <hwloc.h>

#include <string>

#include "topology/topology.h"

namespace loom::topo::detail {

// NUMA nodes as CPU nodes (with package, CPUs, memory, CPU identity), the PU
// table, cache levels and the NUMA latency matrix.
void importCpus(hwloc_topology_t h, Topology& t);

// GPUs, NICs and NVSwitches with the PCI switches above them, and NVLink
// from hwloc's NVLinkBandwidth matrix when present. Call after importCpus.
void importPci(hwloc_topology_t h, Topology& t);

std::string infoValue(hwloc_obj_t obj, const char* name);  // "" if absent

}  // namespace loom::topo::detail

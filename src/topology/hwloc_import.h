// hwloc as a source of the graph: the live machine, or an hwloc XML export
// (lstopo --of xml, formats 1.x and 2.x as hwloc 2.x imports them).
#pragma once

#include <memory>
#include <string>

#include "topology/nvml_probe.h"
#include "topology/topology.h"
#include "topology/xml_doc.h"

namespace loom::topo {

// This machine: hwloc for CPUs, memory, caches and the PCI tree, NVML (when
// libnvidia-ml can be loaded) for NVLink peers hwloc does not report.
std::unique_ptr<Topology> detectTopology();

// An hwloc XML file. Throws loom::Error naming the file when hwloc cannot
// import it (wrong format version, not a topology), and "file.xml:12: ..."
// for an object hwloc 2.9.0 would crash on (hwloc_xml_precheck.h), checked
// before hwloc sees the file.
std::unique_ptr<Topology> importHwlocXml(const std::string& path);
// The same for a file already parsed (readTopologyFile's format check).
std::unique_ptr<Topology> importHwlocXml(const XmlDoc& doc);

// Adds the NVLinks NVML reported between devices of t's PCI tree (links to
// devices t does not have are logged and skipped).
void addNvmlLinks(Topology& t, const NvmlInfo& nvml);

// "2.9.0": the hwloc library Loom runs with.
std::string hwlocRuntimeVersion();

}  // namespace loom::topo

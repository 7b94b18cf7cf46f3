// Topology files by content: NCCL XML (<system>) or hwloc XML (<topology>).
#pragma once

#include <memory>
#include <string>

#include "topology/topology.h"

namespace loom::topo {

// Reads either format. `detected` (may be null) fills in what an NCCL file
// leaves out; hwloc files are complete and ignore it. Throws loom::Error
// (loomInvalidArgument) as "file:line: what is wrong".
std::unique_ptr<Topology> readTopologyFile(const std::string& path, const Topology* detected);

}  // namespace loom::topo

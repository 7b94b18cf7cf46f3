// hwloc XML (LOOM_TOPO_FILE=<topology ...>, lstopo --of xml): hwloc parses
// the file, Loom's import walks what hwloc built. Any bytes either import or
// fail with loom::Error; never a crash, leak or UB.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/error.h"
#include "exercise_topology.h"
#include "topology/hwloc_import.h"
#include "topology/topology_file.h"

namespace {

loom::fuzz::InputFile* input;
loom::fuzz::InputFile* scratch;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  loom::fuzz::quietLogging();
  setenv("HWLOC_XML_VERBOSE", "0", 1);
  input = new loom::fuzz::InputFile;
  scratch = new loom::fuzz::InputFile;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = input->write(data, size);
  std::unique_ptr<loom::topo::Topology> t;
  try {
    // As LOOM_TOPO_FILE reads it: Loom's format check first (and its refusal
    // of what would crash hwloc 2.9.0, hwloc_xml_precheck.h), then hwloc.
    loom::topo::XmlDoc doc(path);
    if (loom::topo::elementName(doc.root()) != "topology") return -1;  // not this reader's input
    t = loom::topo::readTopologyFile(path, nullptr);
  } catch (const loom::Error&) {
    return 0;
  }
  loom::fuzz::exerciseTopology(*t, *scratch);
  return 0;
}

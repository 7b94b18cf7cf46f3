// NCCL topology XML (LOOM_TOPO_FILE=<system ...>): any bytes either read as
// a topology or fail with loom::Error; never a crash, leak or UB. Each input
// is read alone and with a detected machine to fill in from (NCCL's rule).
#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/error.h"
#include "exercise_topology.h"
#include "topology/hwloc_import.h"

namespace {

loom::fuzz::InputFile* input;
loom::fuzz::InputFile* scratch;
std::unique_ptr<loom::topo::Topology> detected;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  loom::fuzz::quietLogging();
  input = new loom::fuzz::InputFile;
  scratch = new loom::fuzz::InputFile;
  // A machine with GPUs, NICs and a PCI switch stands in for detection.
  detected = loom::topo::importHwlocXml(LOOM_FUZZ_TOPOLOGIES "/llnl-pascal-2xP100-pcie-switch-mlx5.hwloc.xml");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = input->write(data, size);
  for (const loom::topo::Topology* fill : {static_cast<const loom::topo::Topology*>(nullptr),
                                           static_cast<const loom::topo::Topology*>(detected.get())}) {
    std::unique_ptr<loom::topo::Topology> t;
    try {
      loom::topo::XmlDoc doc(path);
      if (loom::topo::elementName(doc.root()) != "system") return -1;  // not this reader's input
      t = loom::topo::readNcclXml(doc, fill);
    } catch (const loom::Error&) {
      continue;  // refused with a sentence: what the reader should do
    }
    loom::fuzz::exerciseTopology(*t, *scratch);
  }
  return 0;
}

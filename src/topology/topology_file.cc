// Which reader a topology file needs, decided by its content, and the
// loader the communicator calls at init.
#include "topology/topology_file.h"

#include <exception>
#include <memory>
#include <new>

#include "base/error.h"
#include "base/logging.h"
#include "topology/hwloc_import.h"
#include "topology/nccl_xml.h"
#include "topology/placement.h"
#include "topology/xml_doc.h"

namespace loom::topo {

namespace {

std::unique_ptr<Topology> readByFormat(const std::string& path, const Topology* detected) {
  XmlDoc doc(path);  // well-formedness errors with line numbers, for both formats
  const xmlNode* root = doc.root();
  std::string name = elementName(root);
  if (name == "system") return readNcclXml(doc, detected);
  if (name != "topology") {
    doc.failAt(root, "root element <", name, "> is neither NCCL's <system> nor hwloc's <topology>");
  }
  // hwloc 1.x files carry no version; 2.x say "2.0"; 3.x is beyond hwloc 2.
  std::string version = attrValue(root, "version");
  if (!version.empty() && version[0] != '1' && version[0] != '2') {
    doc.failAt(root, "hwloc XML format version ", version, " cannot be imported by hwloc ", hwlocRuntimeVersion(),
               " (formats 1.x and 2.x can)");
  }
  return importHwlocXml(doc);  // complete by itself: no fill-in
}

}  // namespace

std::unique_ptr<Topology> readTopologyFile(const std::string& path, const Topology* detected) {
  // Every refusal is a loom::Error naming file and line. Anything else would
  // reach the caller (init, loom-topo) as an exception it does not expect,
  // so it becomes a sentence that at least names the file.
  try {
    return readByFormat(path, detected);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    fail(loomSystemError, path + ": out of memory reading this topology file");
  } catch (const std::exception& e) {
    fail(loomInternalError,
         path + ": reading this topology file failed inside Loom (" + e.what() + "); please report it with the file");
  }
}

std::unique_ptr<Topology> loadTopology(const std::string& topoFile, const std::string& dumpFile) {
  std::unique_ptr<Topology> detected = detectTopology();
  std::unique_ptr<Topology> t = topoFile.empty() ? std::move(detected) : readTopologyFile(topoFile, detected.get());
  LOOM_INFO("INIT", -1,
            "topology from " << t->source << ": " << t->cpuNodes().size() << " NUMA nodes, " << t->packageCount()
                             << " sockets, " << t->gpus().size() << " GPUs, " << t->nics().size() << " NICs");
  if (!dumpFile.empty()) {
    writeNcclXmlFile(*t, dumpFile);
    LOOM_INFO("INIT", -1, "topology written to " << dumpFile);
  }
  return t;
}

}  // namespace loom::topo

#include "topology/hwloc_xml_precheck.h"

#include <string>

namespace loom::topo {

namespace {

// I/O and Misc objects carry no cpuset of their own in hwloc's format.
bool isIoOrMisc(const std::string& type) {
  return type == "Bridge" || type == "PCIDev" || type == "OSDev" || type == "Misc";
}

void checkPair(const XmlDoc& doc, const xmlNode* n, const std::string& type, const char* set, const char* complete) {
  bool hasSet = hasAttr(n, set), hasComplete = hasAttr(n, complete);
  if (hasSet == hasComplete) return;
  const char* present = hasSet ? set : complete;
  const char* missing = hasSet ? complete : set;
  // open-mpi/hwloc#783: hwloc accepts the object, then orders siblings by
  // the missing set and dereferences NULL (hwloc_bitmap_compare_first).
  doc.failAt(n, "<object type=\"", type, "\"> has ", present, " but no ", missing,
             " (hwloc writes both; hwloc releases without open-mpi/hwloc#783 crash on such a file)");
}

void checkObjects(const XmlDoc& doc, const xmlNode* node, bool first) {
  for (; node != nullptr; node = node->next) {
    if (node->type != XML_ELEMENT_NODE || elementName(node) != "object") continue;
    std::string type = attrValue(node, "type");
    if (first && isIoOrMisc(type)) {
      // open-mpi/hwloc#800: an I/O root has no parent to take its locality
      // from (NULL dereference in the importer).
      doc.failAt(node, "<object type=\"", type, "\"> cannot be the topology's root object (expected Machine; "
                       "hwloc releases without open-mpi/hwloc#800 crash on such a file)");
    }
    if (!isIoOrMisc(type)) {
      checkPair(doc, node, type, "cpuset", "complete_cpuset");
      checkPair(doc, node, type, "nodeset", "complete_nodeset");
    }
    checkObjects(doc, node->children, false);
    first = false;
  }
}

}  // namespace

void precheckHwlocXml(const XmlDoc& doc) { checkObjects(doc, doc.root()->children, true); }

}  // namespace loom::topo

#include "topology/hwloc_xml_precheck.h"

#include <cctype>
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

// hwloc's bitmap text: comma-separated hex words, a zero word written empty
// ("0x00000001,,0x10000000"), optionally after "0xf...f," for an infinite
// set. hwloc 2.9.0 reads anything else as a partial set and can end with an
// empty topology that it dereferences ("Topology became empty, aborting!",
// then SIGSEGV).
bool isHwlocBitmap(const std::string& text) {
  size_t at = text.rfind("0xf...f,", 0) == 0 ? 8 : 0;
  size_t allDigits = 0;
  while (at <= text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(at, end - at);
    if (word.rfind("0x", 0) == 0 || word.rfind("0X", 0) == 0) {
      word.erase(0, 2);
      if (word.empty()) return false;  // "0x" alone
    }
    for (char c : word)
      if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
    allDigits += word.size();
    at = end + 1;
  }
  return allDigits > 0;
}

void checkBitmaps(const XmlDoc& doc, const xmlNode* n, const std::string& type) {
  for (const char* set : {"cpuset", "complete_cpuset", "allowed_cpuset", "nodeset", "complete_nodeset",
                          "allowed_nodeset"}) {
    if (!hasAttr(n, set)) continue;
    const std::string value = attrValue(n, set);
    if (!isHwlocBitmap(value))
      doc.failAt(n, "<object type=\"", type, "\"> has ", set, "=\"", value,
                 "\", which is not an hwloc bitmap (comma-separated hex words such as 0x000000ff)");
  }
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
    checkBitmaps(doc, node, type);
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

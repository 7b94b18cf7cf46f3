#include "topology/hwloc_xml_precheck.h"

#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topology/int_text.h"

namespace loom::topo {

namespace {

// I/O and Misc objects carry no cpuset of their own in hwloc's format.
bool isIoOrMisc(const std::string& type) {
  return type == "Bridge" || type == "PCIDev" || type == "OSDev" || type == "Misc";
}

void checkPair(const XmlDoc& doc, const xmlNode* n, const std::string& type, const char* set, const char* complete) {
  bool hasSet = hasAttr(n, set), hasComplete = hasAttr(n, complete);
  if (hasSet && hasComplete) return;
  if (!hasSet && !hasComplete) {
    // hwloc 2.9.0 dereferences the missing set of a 1.x file's root or NUMA
    // node (SIGSEGV in hwloc_bitmap_isequal); upstream now refuses any such
    // object (open-mpi/hwloc 837a039), and so does Loom, whatever the format.
    doc.failAt(n, "<object type=\"", type, "\"> has neither ", set, " nor ", complete,
               " (hwloc writes both on every object that is not I/O or Misc; hwloc 2.9.0 can crash on a file "
               "without them)");
  }
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

// The indexes a valid hwloc bitmap text holds (isHwlocBitmap), or nullopt
// for an infinite set: the last word is indexes 0-31, each word before it
// 32 higher.
std::optional<std::vector<unsigned>> bitmapMembers(const std::string& text) {
  if (text.rfind("0xf...f,", 0) == 0) return std::nullopt;
  std::vector<std::string> words;
  for (size_t at = 0;;) {
    size_t end = text.find(',', at);
    words.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  std::vector<unsigned> members;
  for (size_t w = 0; w < words.size(); w++) {
    std::string digits = words[words.size() - 1 - w];
    if (digits.rfind("0x", 0) == 0 || digits.rfind("0X", 0) == 0) digits.erase(0, 2);
    // Leading zeros aside, a word has at most 8 hex digits (32 bits).
    size_t first = digits.find_first_not_of('0');
    if (first == std::string::npos) continue;
    digits.erase(0, first);
    if (digits.size() > 8) return std::nullopt;
    unsigned long bits = std::stoul(digits, nullptr, 16);
    for (unsigned b = 0; b < 32; b++)
      if (bits & (1ul << b)) members.push_back(static_cast<unsigned>(w * 32 + b));
  }
  return members;
}

// hwloc writes a PU's cpuset as the one bit of its os_index, and a NUMA
// node's nodeset likewise; hwloc 2.9.0 keeps whatever a file says without
// comparing the two (upstream checks since open-mpi/hwloc 51f0c26). Loom
// numbers CPUs and NUMA nodes by os_index, so a PU whose cpuset names
// another CPU would land in the wrong NUMA node, or in none.
void checkOwnBit(const XmlDoc& doc, const xmlNode* n, const std::string& type) {
  const char* set = type == "PU" ? "cpuset" : type == "NUMANode" ? "nodeset" : nullptr;
  if (set == nullptr || !hasAttr(n, "os_index") || !hasAttr(n, set)) return;
  std::string index = attrValue(n, "os_index"), bits = attrValue(n, set);
  std::optional<int> os = parseDecimalInt(index);
  std::optional<std::vector<unsigned>> members = bitmapMembers(bits);
  if (!os || !members || *members != std::vector<unsigned>{static_cast<unsigned>(*os)})
    doc.failAt(n, "<object type=\"", type, "\" os_index=\"", index, "\"> has ", set, "=\"", bits,
               "\", which is not that one index (hwloc writes a ", type, "'s ", set, " as the bit of its os_index)");
}

// hwloc stores these numbers into enums unchecked; a value outside the enum
// is undefined behaviour the moment Loom (or hwloc) reads it.
struct EnumAttr {
  const char* name;
  unsigned max;  // values 0..max are defined (hwloc 2.9's enums)
  const char* meaning;
};
constexpr EnumAttr kEnumAttrs[] = {
    {"cache_type", 2, "0 (unified), 1 (data) or 2 (instruction)"},
    {"osdev_type", 5, "0 (block) to 5 (coprocessor)"},
};

bool isNumberUpTo(const std::string& text, unsigned max) {
  std::optional<int> value = parseDecimalInt(text);
  return value && static_cast<unsigned>(*value) <= max;
}

void checkEnums(const XmlDoc& doc, const xmlNode* n, const std::string& type) {
  for (const EnumAttr& e : kEnumAttrs) {
    if (!hasAttr(n, e.name)) continue;
    std::string value = attrValue(n, e.name);
    if (!isNumberUpTo(value, e.max))
      doc.failAt(n, "<object type=\"", type, "\"> has ", e.name, "=\"", value, "\"; hwloc defines ", e.meaning);
  }
  if (hasAttr(n, "bridge_type")) {
    // "upstream-downstream", each side 0 (host) or 1 (PCI).
    std::string value = attrValue(n, "bridge_type");
    size_t dash = value.find('-');
    if (dash == std::string::npos || !isNumberUpTo(value.substr(0, dash), 1) ||
        !isNumberUpTo(value.substr(dash + 1), 1))
      doc.failAt(n, "<object type=\"", type, "\"> has bridge_type=\"", value,
                 "\"; hwloc writes upstream-downstream, each 0 (host) or 1 (PCI), such as 1-1");
  }
}

// hwloc reads pci_busid and pci_type with sscanf and silently keeps zeros
// when they do not parse: a GPU would become class 0x0000 from vendor 0000.
// `pattern`: 'h' is a run of 1..n hex digits where n is the number of 'h's
// in a row; any other character must appear as is.
bool matchesHexPattern(const std::string& text, const std::string& pattern) {
  size_t at = 0, p = 0;
  while (p < pattern.size()) {
    if (pattern[p] != 'h') {
      if (at >= text.size() || text[at] != pattern[p]) return false;
      ++at, ++p;
      continue;
    }
    size_t width = 0;
    while (p < pattern.size() && pattern[p] == 'h') ++width, ++p;
    size_t digits = 0;
    while (at < text.size() && digits < width && std::isxdigit(static_cast<unsigned char>(text[at]))) ++at, ++digits;
    if (digits == 0) return false;
  }
  return at == text.size();
}

void checkPciAttrs(const XmlDoc& doc, const xmlNode* n, const std::string& type) {
  struct PciAttrFormat {
    const char* name;
    const char* pattern;
    const char* example;
  };
  for (const PciAttrFormat& f : {PciAttrFormat{"pci_busid", "hhhh:hh:hh.h", "0000:3b:00.0"},
                                 PciAttrFormat{"pci_type", "hhhh [hhhh:hhhh] [hhhh:hhhh] hh", "0302 [10de:2330] [10de:16c1] a1"}}) {
    if (!hasAttr(n, f.name)) continue;
    std::string value = attrValue(n, f.name);
    if (!matchesHexPattern(value, f.pattern))
      doc.failAt(n, "<object type=\"", type, "\"> has ", f.name, "=\"", value, "\", which is not hwloc's format (such as ",
                 f.example, ")");
  }
}

// hwloc keeps <info> values as text; Loom reads these as ints
// (hwloc_cpus.cc), and a number beyond int (CPUFamilyNumber="4294967296")
// would otherwise be a wrong CPU identity in the dump, or an exception.
void checkNumericInfos(const XmlDoc& doc, const xmlNode* object, const std::string& type) {
  for (const xmlNode* c = object->children; c != nullptr; c = c->next) {
    if (c->type != XML_ELEMENT_NODE || elementName(c) != "info") continue;
    std::string name = attrValue(c, "name");
    if (name != "CPUFamilyNumber" && name != "CPUModelNumber") continue;
    std::string value = attrValue(c, "value");
    if (!parseDecimalInt(value))
      doc.failAt(c, "<info name=\"", name, "\"> of <object type=\"", type, "\"> has value=\"", value,
                 "\", which is not a whole number from 0 to 2147483647 (hwloc writes the CPU's decimal number)");
  }
}

// hwloc keeps two objects with one PCI bus id (an edited or concatenated
// file); a machine has one device per address, and Loom finds devices by it.
void checkBusIdUnique(const XmlDoc& doc, const xmlNode* n, const std::string& type, std::map<std::string, int>& seen) {
  if (!hasAttr(n, "pci_busid")) return;
  std::string busId = attrValue(n, "pci_busid");
  auto [it, fresh] = seen.emplace(busId, lineOf(n));
  if (!fresh)
    doc.failAt(n, "<object type=\"", type, "\"> has pci_busid=\"", busId, "\", which the object on line ",
               std::to_string(it->second), " already has (one device per PCI address)");
}

void checkObjects(const XmlDoc& doc, const xmlNode* node, bool first, std::map<std::string, int>& busIds) {
  for (; node != nullptr; node = node->next) {
    if (node->type != XML_ELEMENT_NODE || elementName(node) != "object") continue;
    if (!hasAttr(node, "type"))
      doc.failAt(node, "<object> has no type attribute (hwloc writes one on every object, such as type=\"Package\")");
    std::string type = attrValue(node, "type");
    if (first && isIoOrMisc(type)) {
      // open-mpi/hwloc#800: an I/O root has no parent to take its locality
      // from (NULL dereference in the importer).
      doc.failAt(node, "<object type=\"", type, "\"> cannot be the topology's root object (expected Machine; "
                       "hwloc releases without open-mpi/hwloc#800 crash on such a file)");
    }
    checkBitmaps(doc, node, type);
    checkOwnBit(doc, node, type);
    checkEnums(doc, node, type);
    checkPciAttrs(doc, node, type);
    checkBusIdUnique(doc, node, type, busIds);
    checkNumericInfos(doc, node, type);
    if (!isIoOrMisc(type)) {
      checkPair(doc, node, type, "cpuset", "complete_cpuset");
      checkPair(doc, node, type, "nodeset", "complete_nodeset");
    }
    checkObjects(doc, node->children, false, busIds);
    first = false;
  }
}

}  // namespace

void precheckHwlocXml(const XmlDoc& doc) {
  std::map<std::string, int> busIds;  // pci_busid -> line of its first object
  checkObjects(doc, doc.root()->children, true, busIds);
}

}  // namespace loom::topo

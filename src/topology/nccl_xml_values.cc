// Attribute syntax of NCCL topology XML, as lenient as NCCL's own reader
// where real files need it, strict where a value cannot mean anything.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "base/logging.h"
#include "topology/nccl_xml.h"
#include "topology/nccl_xml_internal.h"
#include "topology/pci.h"

namespace loom::topo {

std::optional<int64_t> parseNcclNumber(const std::string& text) {
  size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) b++;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) e--;
  std::string s = text.substr(b, e - b);
  size_t digits = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
  bool hex = s.size() > digits + 2 && s[digits] == '0' && (s[digits + 1] == 'x' || s[digits + 1] == 'X');
  if (s.size() <= digits) return std::nullopt;
  // strtoll would skip more spaces and a second sign; the text must be exactly one number.
  size_t first = digits + (hex ? 2 : 0);
  if (!std::isxdigit(static_cast<unsigned char>(s[first]))) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, hex ? 16 : 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return v;
}

int64_t ncclNumber(const XmlDoc& doc, const xmlNode* n, const char* attr) {
  std::string v = attrValue(n, attr);
  if (v.find_first_not_of(" \t") == std::string::npos) return -1;
  std::optional<int64_t> x = parseNcclNumber(v);
  if (!x) doc.failAt(n, "<", elementName(n), "> has ", attr, "=\"", v, "\" which is not a number");
  return *x < 0 ? -1 : *x;
}

int ncclInt(const XmlDoc& doc, const xmlNode* n, const char* attr) {
  int64_t v = ncclNumber(doc, n, attr);
  if (v > INT_MAX) {
    doc.failAt(n, "<", elementName(n), "> has ", attr, "=\"", attrValue(n, attr), "\", which is beyond ", INT_MAX,
               ", the largest value this attribute can hold");
  }
  return static_cast<int>(v);
}

bool usedByNetTransport(const XmlDoc& doc, const xmlNode* net) {
  if (!hasAttr(net, "net")) return true;
  std::string v = attrValue(net, "net");
  // NCCL reads it with strtol: empty is 0, and so is "not a net device".
  if (v.find_first_not_of(" \t") == std::string::npos) return false;
  std::optional<int64_t> x = parseNcclNumber(v);
  if (!x) doc.failAt(net, "<net> has net=\"", v, "\" which is not a number");
  return *x != 0;
}

std::vector<xmlNode*> elements(const xmlNode* parent) {
  std::vector<xmlNode*> out;
  for (xmlNode* c = parent->children; c != nullptr; c = c->next) {
    if (c->type == XML_ELEMENT_NODE) out.push_back(c);
  }
  return out;
}

bool hasChild(const xmlNode* n, const char* name) {
  for (xmlNode* c : elements(n)) {
    if (elementName(c) == name) return true;
  }
  return false;
}

Attributes extras(const xmlNode* n, const std::set<std::string>& known) {
  Attributes out;
  for (xmlAttr* a = n->properties; a != nullptr; a = a->next) {
    std::string name = reinterpret_cast<const char*>(a->name);
    if (!known.count(name)) out.emplace_back(name, attrValue(n, name.c_str()));
  }
  return out;
}

NodeKind pciClassKind(int32_t c, int32_t vendor) {
  if (isBridgeClass(c)) return NodeKind::kPciSwitch;
  if (isDisplayClass(c)) return NodeKind::kGpu;
  if (isNetworkClass(c)) return NodeKind::kNic;
  if (isNvSwitchClass(c) && (vendor < 0 || vendor == kNvidiaVendor)) return NodeKind::kNvSwitch;
  return NodeKind::kPciDevice;
}

bool isRdmaPci(const PciInfo& p) {
  if (p.classCode >= 0 && (p.classCode >> 8) == 0x0207) return true;  // InfiniBand
  if (p.vendor == 0x15b3) return true;                                // Mellanox / NVIDIA networking
  return p.vendor == 0x1d0f && (p.device & 0xfff0) == 0xefa0;         // AWS EFA
}

Attributes allAttributes(const xmlNode* n) {
  Attributes out;
  for (xmlAttr* a = n->properties; a != nullptr; a = a->next) {
    std::string name = reinterpret_cast<const char*>(a->name);
    out.emplace_back(name, attrValue(n, name.c_str()));
  }
  return out;
}

bool parseAffinity(const std::string& text, std::vector<int>* cpus) {
  std::vector<std::string> words;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    words.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  cpus->clear();
  int base = 0;
  for (auto it = words.rbegin(); it != words.rend(); ++it, base += 32) {
    if (it->empty() || it->size() > 8 || it->find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
      return false;
    }
    unsigned long w = std::strtoul(it->c_str(), nullptr, 16);
    for (int b = 0; b < 32; b++) {
      if (w & (1ul << b)) cpus->push_back(base + b);
    }
  }
  std::sort(cpus->begin(), cpus->end());
  return true;
}

void warnAt(Topology& t, const XmlDoc& doc, const xmlNode* where, const std::string& what) {
  std::string line = doc.path() + ":" + std::to_string(lineOf(where)) + ": " + what;
  LOOM_WARN("INIT", -1, line);
  t.warnings.push_back(std::move(line));
}

}  // namespace loom::topo

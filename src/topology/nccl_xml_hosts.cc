// Topology files that describe several hosts. NCCL dumps a multi-node NVLink
// job (MNNVL: GB200 NVL72, one NVLink domain over many trays) after fusing
// every host's XML, so the dump holds the <cpu> elements of all of them, told
// apart only by host_hash, with the same NUMA ids and bus ids on each host.
//
// NCCL itself reads such a file as one host's: ncclTopoGetSystem overwrites
// every <cpu>'s host_hash with its own getHostHash() ("not intended to be
// preserved from the XML files"), ncclTopoFillGpu / ncclTopoFillNet find the
// devices they use by the first <pci busid> / <net name> in the file, and
// ncclTopoTrimXml drops every branch without such a device: what remains is
// the first host's elements. Loom does the same, but loudly: the warning says
// how many hosts there were and what was skipped.
#include <cstdlib>
#include <map>
#include <sstream>
#include <vector>

#include "topology/nccl_xml_internal.h"

namespace loom::topo {

namespace {

// NCCL writes the hash as hex (xmlSetAttrLong: "0x%lx") and reads it with
// strtoull(..., 16); compare values, so "0xAB" and "0xab" are one host.
std::string hostKey(const std::string& text) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text.c_str(), &end, 16);
  if (text.empty() || end == text.c_str() || *end != '\0') return text;
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

int countElements(const xmlNode* n, const char* name) {
  int count = 0;
  for (const xmlNode* c = n->children; c != nullptr; c = c->next) {
    if (c->type != XML_ELEMENT_NODE) continue;
    count += (elementName(c) == name) + countElements(c, name);
  }
  return count;
}

}  // namespace

std::set<const xmlNode*> cpusOfOtherHosts(Topology& t, const XmlDoc& doc, const xmlNode* system) {
  std::vector<const xmlNode*> cpus;
  for (const xmlNode* c = system->children; c != nullptr; c = c->next) {
    if (c->type == XML_ELEMENT_NODE && elementName(c) == "cpu") cpus.push_back(c);
  }
  // A <cpu> without host_hash (hand-written, or an older NCCL) belongs to the
  // host that is read: only two different hashes make two hosts.
  std::map<std::string, const xmlNode*> firstOfHost;
  std::string kept;
  for (const xmlNode* c : cpus) {
    if (!hasAttr(c, "host_hash")) continue;
    std::string key = hostKey(attrValue(c, "host_hash"));
    if (firstOfHost.emplace(key, c).second && kept.empty()) kept = key;
  }
  std::set<const xmlNode*> skipped;
  if (firstOfHost.size() < 2) return skipped;
  int gpus = 0, nics = 0;
  for (const xmlNode* c : cpus) {
    if (!hasAttr(c, "host_hash") || hostKey(attrValue(c, "host_hash")) == kept) continue;
    skipped.insert(c);
    gpus += countElements(c, "gpu");
    nics += countElements(c, "nic");
  }
  const xmlNode* first = nullptr;
  for (const xmlNode* c : cpus) {
    if (skipped.count(c)) {
      first = c;
      break;
    }
  }
  std::ostringstream os;
  os << "the file describes " << firstOfHost.size() << " hosts (different host_hash values: NCCL's dump of a "
     << "multi-node NVLink job); Loom reads the first, host_hash " << kept << " (the <cpu> on line "
     << lineOf(firstOfHost[kept]) << "), as NCCL does when it loads a topology file (it takes every <cpu> for its "
     << "own host and keeps the first element of each bus id), and skipped " << skipped.size()
     << " <cpu> of the other hosts, from this line on, with " << gpus << " GPUs and " << nics << " NICs";
  warnAt(t, doc, first, os.str());
  return skipped;
}

}  // namespace loom::topo

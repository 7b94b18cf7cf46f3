// NCCL's topology XML (NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE, <system
// version="1">): what cloud vendors ship for their GPU VMs, and what Loom
// dumps so a user can correct one line and load it back.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace loom::topo {

class XmlDoc;  // topology/xml_doc.h; kept out so users need no libxml2 headers

// Reads a parsed NCCL topology. With `detected`, NCCL's fill-in rule:
// values in the file win, the detected machine fills what the file leaves
// out (CPU sets, PCI ids, link speeds, devices the file does not list).
// Accepts what NCCL's reader accepts (docs/TOPOLOGY.md lists it); what it
// tolerates but a person should know goes to the result's warnings. Throws
// loom::Error with file:line for malformed XML, values that are not numbers,
// devices without a bus id, misplaced elements and contradictions
// (duplicate bus ids or NUMA ids, overlapping CPU sets, a <gpu> on a bridge,
// an NVLink to a NIC).
std::unique_ptr<Topology> readNcclXml(const XmlDoc& doc, const Topology* detected);

// The topology as NCCL XML. Deterministic: reading it back and writing again
// gives the same text. Loom adds package="N" and memory="bytes" to <cpu>
// (NCCL ignores attributes it does not know).
std::string ncclXml(const Topology& t);
void writeNcclXmlFile(const Topology& t, const std::string& path);

// NCCL's <cpu affinity>: 32-bit hex words, most significant first.
std::string formatAffinity(const std::vector<int>& cpus, int words);
bool parseAffinity(const std::string& text, std::vector<int>* cpus);

// A number as NCCL reads it (strtol base 0): decimal or 0x-hex, optional
// sign and surrounding spaces. Unlike strtol, a leading 0 stays decimal
// (NCCL never writes octal) and trailing text is refused. nullopt if the
// text is not a number.
std::optional<int64_t> parseNcclNumber(const std::string& text);

// Fill-in: copies into `file` what `detected` knows and the file omits.
void fillFromDetected(Topology& file, const Topology& detected);

}  // namespace loom::topo

// Pieces of the NCCL XML reader (nccl_xml_read.cc) that live in their own
// files: number syntax, hosts and NVLink resolution. Not for other layers.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "topology/nccl_xml.h"
#include "topology/topology.h"
#include "topology/xml_doc.h"

namespace loom::topo {

// An attribute as a number (parseNcclNumber), or -1 when absent, empty or
// negative: NCCL writes -1 for "unknown" (a NIC's speed, a GPU's dev, a
// GPU's mlopart). Throws with file:line when it is not a number.
int64_t ncclNumber(const XmlDoc& doc, const xmlNode* n, const char* attr);

// The same for an attribute Loom (and NCCL) keep in an int: a value beyond
// INT_MAX is refused with file:line rather than wrapped into another number
// (familyid="4294967296" would read as 0, numaid="4294967297" as NUMA 1).
int ncclInt(const XmlDoc& doc, const xmlNode* n, const char* attr);

// Whether NCCL's network transport uses this <net> (ncclTopoAddNic): its
// net attribute, absent meaning 1 (older dumps), "0" or empty meaning not
// (a GIN/RMA/CollNet-only device, or a port fused into a virtual NIC).
bool usedByNetTransport(const XmlDoc& doc, const xmlNode* net);

// The element children of a node, and whether one of them has this name.
std::vector<xmlNode*> elements(const xmlNode* parent);
bool hasChild(const xmlNode* n, const char* name);

// The attributes of an element that are not in `known`, in file order.
Attributes extras(const xmlNode* n, const std::set<std::string>& known);

// A NIC whose PCI ids say RDMA: InfiniBand class, Mellanox/NVIDIA, AWS EFA.
bool isRdmaPci(const PciInfo& p);

// What a device's class (0 or more) makes it, as NCCL reads classes: a
// bridge is a PCI switch, a display controller a GPU, a network controller
// a NIC, NVIDIA's 0x0680 an NVSwitch; anything else a plain PCI device.
NodeKind pciClassKind(int32_t classCode, int32_t vendor);

// Every attribute of an element, in file order.
Attributes allAttributes(const xmlNode* n);

// "file:line: what", logged at WARN and kept in t.warnings.
void warnAt(Topology& t, const XmlDoc& doc, const xmlNode* where, const std::string& what);

// NCCL's dump of a multi-node NVLink job holds the <cpu> elements of every
// host (told apart by host_hash). Like NCCL loading such a file, Loom reads
// the first host's: returns the <cpu> elements of <system> that belong to
// other hosts, and warns (file:line, number of hosts, what is skipped) when
// there are any. nccl_xml_hosts.cc.
std::set<const xmlNode*> cpusOfOtherHosts(Topology& t, const XmlDoc& doc, const xmlNode* system);

// An <nvlink> as read; resolved once every <gpu> of the file is known,
// because a GPU may name a peer the file lists later.
struct PendingNvlink {
  int gpu = -1;
  std::string target;  // as written
  int count = 1;
  int32_t tclass = -1;
  const xmlNode* where = nullptr;
};

// NCCL's ncclTopoAddNvLinks, on Loom's graph: a GPU peer becomes an NVLink
// between the two GPUs; an NVSwitch (by class, or a target that is no PCI
// address, as NCCL writes for switches a VM hides) becomes an NVSwitch node
// every such GPU links to; a CPU peer (POWER9) is not modelled. An <nvlink>
// to the GPU itself or to a GPU the file does not list becomes no link: it is
// kept for the dump and reported in t.warnings (once per file and cause).
void resolveNvlinks(Topology& t, const XmlDoc& doc, const std::vector<PendingNvlink>& pending);

}  // namespace loom::topo

// <nvlink> elements of an NCCL topology file -> NVLink links. Follows what
// NCCL's ncclTopoAddNvLinks does with each kind of target, and what its
// writer (ncclTopoGetXmlFromGpu) puts in real dumps:
//   - target a GPU's bus id, tclass 0x03xxxx: GPU-to-GPU NVLink (DGX-1, NVL pairs);
//   - tclass 0x068000, or a class NCCL does not single out: an NVSwitch. The
//     target is the switch's bus id on bare metal (HGX A100), and on VMs that
//     hide the switches a placeholder that is no PCI address ("fffffff:ffff:ff");
//     NCCL treats all switches as one fabric, so every such GPU reaches every other;
//   - tclass 0x068001: the CPU (POWER9 NVLink to the host), not modelled.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include "base/logging.h"
#include "topology/nccl_xml_internal.h"
#include "topology/paths.h"
#include "topology/pci.h"

namespace loom::topo {

namespace {

// Nodes by bus id and NVLinks by their ends, kept as links and switches are
// added: a file has an <nvlink> per GPU and lane group (18 per GPU on
// NVLink 4), and a scan of every node and link for each was quadratic.
class NvlinkIndex {
 public:
  explicit NvlinkIndex(const Topology& t) {
    for (const Node& n : t.nodes) addNode(n);
    for (const Link& l : t.links) addLink(l);
  }
  void addNode(const Node& n) {
    if (!n.pci.busId.empty()) byBusId_[n.pci.busId].push_back(n.id);
  }
  void addLink(const Link& l) {
    if (l.kind == LinkKind::kNvLink) linked_.insert(std::minmax(l.a, l.b));
  }
  bool linked(int a, int b) const { return linked_.count(std::minmax(a, b)) > 0; }
  // Topology::findBusId: the first node with that bus id; -1 if none.
  int find(const std::string& busId) const {
    auto it = byBusId_.find(busId);
    return it == byBusId_.end() ? -1 : it->second.front();
  }
  // Topology::gpusAtBusId: the GPUs among them (kinds can change while resolving).
  std::vector<int> gpus(const Topology& t, const std::string& busId) const {
    std::vector<int> out;
    auto it = byBusId_.find(busId);
    if (it == byBusId_.end()) return out;
    for (int id : it->second) {
      if (t.nodes[id].kind == NodeKind::kGpu) out.push_back(id);
    }
    return out;
  }

 private:
  std::unordered_map<std::string, std::vector<int>> byBusId_;  // node ids in id order
  std::set<std::pair<int, int>> linked_;
};

class NvlinkResolver {
 public:
  NvlinkResolver(Topology& t, const XmlDoc& doc) : t_(t), doc_(doc), index_(t) {}

  void resolve(const PendingNvlink& p) {
    auto address = normalizeBusId(p.target);
    // The GPU's own bus id, which its other MLOPart partition shares too.
    if (address && *address == t_.nodes[p.gpu].pci.busId) return keepSelf(p);
    // The class says a link goes to the CPU whatever sits at its target
    // address (as in NCCL); looked up first, a switch that another <nvlink>
    // made at that address would swallow it, and the dump would lose it.
    if (isNvlinkCpuClass(p.tclass)) {
      LOOM_INFO("INIT", -1, doc_.path() << ":" << lineOf(p.where) << ": NVLink to CPU " << p.target << " ignored");
      return keep(p);
    }
    int found = address ? index_.find(*address) : -1;
    if (found >= 0) return linkTo(p, found);
    if (isDisplayClass(p.tclass)) {
      if (!address) doc_.failAt(p.where, "<nvlink> has target '", p.target, "' which is not a PCI address");
      return keepUnlisted(p, *address);
    }
    linkTo(p, hiddenSwitch(p, address));
  }

  void finish() {
    if (selfCount_ > 0) {
      warnAt(t_, doc_, firstSelf_,
             cat("<nvlink> of GPU ", t_.nodes[selfGpu_].pci.busId, " names the GPU itself as its peer (", selfCount_,
                 " such <nvlink> in this file), as VMs that hide NVLink peers write; "
                 "their lane counts are kept, but no NVLink path is assumed"));
    }
    if (unlistedCount_ > 0) {
      warnAt(t_, doc_, firstUnlisted_,
             cat("<nvlink> target ", firstUnlistedTarget_, " is a GPU the file does not list (", unlistedCount_,
                 " such <nvlink> in this file; a dump from a job that used only some GPUs?); "
                 "no NVLink path to it is assumed"));
    }
  }

 private:
  template <typename... Parts>
  static std::string cat(const Parts&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    return os.str();
  }

  // The element goes back into the dump as it was written.
  void keep(const PendingNvlink& p) {
    t_.nodes[p.gpu].gpuRawChildren.push_back(RawElement{"nvlink", allAttributes(p.where)});
  }

  void keepSelf(const PendingNvlink& p) {
    keep(p);
    if (selfCount_++ == 0) {
      firstSelf_ = p.where;
      selfGpu_ = p.gpu;
    }
  }

  // NCCL drops such a link silently; keeping it lets a later load with the
  // GPU (or fill-in from detection) see it again.
  void keepUnlisted(const PendingNvlink& p, const std::string& target) {
    keep(p);
    if (unlistedCount_++ == 0) {
      firstUnlisted_ = p.where;
      firstUnlistedTarget_ = target;
    }
  }

  void linkTo(const PendingNvlink& p, int target) {
    Node& peer = t_.nodes[target];
    // A bare <pci busid> that an NVLink calls a switch is that switch.
    if (peer.kind == NodeKind::kPciDevice && peer.pci.classCode < 0 && isNvSwitchClass(p.tclass)) {
      peer.kind = NodeKind::kNvSwitch;
    }
    NodeKind k = peer.kind;
    if (k != NodeKind::kGpu && k != NodeKind::kNvSwitch && k != NodeKind::kPciDevice) {
      doc_.failAt(p.where, "<nvlink> target ", t_.nodes[target].pci.busId, " is a ", nodeKindName(k),
                  ", not a GPU or NVSwitch");
    }
    // A GPU split into MLOPart partitions shares its lanes between them, at
    // both ends: NCCL's ncclTopoAddNvLinks divides the bandwidth by the
    // number of partitions of this GPU and, to a GPU, links every partition
    // of the peer. Lanes (count) stay as written, for the dump.
    double bw = p.count * nvlinkGBsPerLane(t_.nodes[p.gpu].sm);
    bw /= static_cast<double>(index_.gpus(t_, t_.nodes[p.gpu].pci.busId).size());
    std::vector<int> peers = k == NodeKind::kGpu ? index_.gpus(t_, peer.pci.busId) : std::vector<int>{target};
    for (int to : peers) {
      if (index_.linked(p.gpu, to)) continue;  // each GPU of a pair lists the link
      t_.addLink(p.gpu, to, LinkKind::kNvLink, bw / static_cast<double>(peers.size()), kNvlLatencyUs, p.count);
      index_.addLink(t_.links.back());
    }
  }

  // NVSwitches appear in NCCL files only as targets: one node per target
  // text, so the switches of a bare-metal dump stay apart and all GPUs of a
  // VM that hides them meet at one.
  int hiddenSwitch(const PendingNvlink& p, const std::optional<std::string>& address) {
    std::string key = address ? *address : lowered(p.target);
    auto it = switches_.find(key);
    if (it != switches_.end()) return it->second;
    Node sw;
    sw.kind = NodeKind::kNvSwitch;
    sw.pci.busId = key;
    sw.pci.classCode = p.tclass >= 0 ? p.tclass : 0x068000;
    sw.implicit = true;
    sw.line = lineOf(p.where);
    int id = t_.addNode(std::move(sw));
    index_.addNode(t_.nodes[id]);
    switches_[key] = id;
    return id;
  }

  static std::string lowered(const std::string& s) {
    std::string out;
    for (char c : s) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  }

  Topology& t_;
  const XmlDoc& doc_;
  NvlinkIndex index_;
  std::map<std::string, int> switches_;
  int selfCount_ = 0, selfGpu_ = -1, unlistedCount_ = 0;
  const xmlNode *firstSelf_ = nullptr, *firstUnlisted_ = nullptr;
  std::string firstUnlistedTarget_;
};

}  // namespace

void resolveNvlinks(Topology& t, const XmlDoc& doc, const std::vector<PendingNvlink>& pending) {
  NvlinkResolver r(t, doc);
  for (const PendingNvlink& p : pending) r.resolve(p);
  r.finish();
}

}  // namespace loom::topo

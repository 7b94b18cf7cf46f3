// Topology: real machines' files (tests/data/topologies, see SOURCES.md
// there), each checked for facts a person can read off the file; dump/load
// round trips; malformed files; ring order.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "support/topology_text.h"
#include "topology/hwloc_import.h"
#include "topology/nccl_xml.h"
#include "topology/paths.h"
#include "topology/pci.h"
#include "topology/placement.h"
#include "topology/topology_file.h"

namespace loom::topo {
namespace {

std::string fixture(const std::string& name) {
  return std::string(LOOM_TEST_DATA_DIR) + "/topologies/" + name;
}

std::unique_ptr<Topology> load(const std::string& name) {
  return readTopologyFile(fixture(name), nullptr);
}

int bus(const Topology& t, const std::string& busId) {
  int id = t.findBusId(busId);
  EXPECT_GE(id, 0) << busId << " not found";
  return id;
}

std::string cls(const Topology& t, const std::string& a, const std::string& b) {
  return pathClassName(path(t, bus(t, a), bus(t, b)).cls);
}

std::string nearestNicName(const Topology& t, const std::string& gpuBusId) {
  int nic = nearestNic(t, bus(t, gpuBusId));
  return nic < 0 ? "" : t.nodes[nic].name;
}

int rdmaNics(const Topology& t) {
  int n = 0;
  for (int id : t.nics()) n += t.nodes[id].rdma;
  return n;
}

std::string slurp(const std::string& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// --- real machines -------------------------------------------------------

// DGX-2: 16 V100 on two sockets, every GPU NVLinked only to NVSwitches
// (hwloc's NVLinkBandwidth matrix has no GPU-GPU entry); one fabric, so
// every pair is NVL, across sockets too.
TEST(TopologyMachines, Dgx2NvSwitchFabricMakesEveryGpuPairNvl) {
  auto t = load("nvidia-dgx2-16xV100-nvswitch.hwloc.xml");
  EXPECT_EQ(t->gpus().size(), 16u);
  EXPECT_EQ(t->nics().size(), 0u);
  EXPECT_EQ(t->cpuNodes().size(), 2u);
  EXPECT_EQ(t->nvSwitches().size(), 12u);  // 11 of class 0680 plus 66:00.0 with a zero pci_type
  for (int a : t->gpus()) {
    for (int b : t->gpus()) {
      if (a != b) {
        EXPECT_EQ(path(*t, a, b).cls, PathClass::kNvl) << t->nodes[a].name << "-" << t->nodes[b].name;
      }
    }
  }
  EXPECT_EQ(cls(*t, "0000:34:00.0", "0000:b7:00.0"), "NVL");  // nvml0 (socket 0) and nvml8 (socket 1)
  // Without NVLink the two GPUs of a PLX switch would be PIX, those of a quad PXB.
  EXPECT_EQ(t->nodes[bus(*t, "0000:34:00.0")].model, "Tesla V100-SXM3-32GB-H");
  EXPECT_EQ(t->nodes[t->rootCpu(bus(*t, "0000:b7:00.0"))].numa, 1);
}

// LLNL Pascal: both P100 and the ConnectX-5 behind one PCIe switch on socket 0.
TEST(TopologyMachines, PascalGpusAndNicShareOneSwitch) {
  auto t = load("llnl-pascal-2xP100-pcie-switch-mlx5.hwloc.xml");
  EXPECT_EQ(t->gpus().size(), 2u);
  EXPECT_EQ(t->nics().size(), 3u);  // mlx5_0 (hsi0) and two Ethernet ports enp12s0f0/1
  EXPECT_EQ(rdmaNics(*t), 1);
  EXPECT_EQ(t->cpuNodes().size(), 2u);
  EXPECT_EQ(cls(*t, "0000:04:00.0", "0000:07:00.0"), "PIX");
  EXPECT_EQ(cls(*t, "0000:04:00.0", "0000:08:00.0"), "PIX");
  EXPECT_EQ(nearestNicName(*t, "0000:04:00.0"), "mlx5_0");
  EXPECT_EQ(nearestNicName(*t, "0000:07:00.0"), "mlx5_0");
  EXPECT_EQ(cls(*t, "0000:04:00.0", "0000:0c:00.0"), "PHB");  // the Ethernet port hangs off the root
}

// AWS g4dn.metal: 8 T4, four per socket, no switches, no NVLink; the EFA and
// ENA NICs on socket 1.
TEST(TopologyMachines, G4dnSplitsGpusOverTwoSockets) {
  auto t = load("aws-g4dn-metal-8xT4-pcie.hwloc.xml");
  EXPECT_EQ(t->gpus().size(), 8u);
  EXPECT_EQ(t->nics().size(), 2u);
  EXPECT_EQ(t->cpuNodes().size(), 2u);
  EXPECT_EQ(t->packageCount(), 2);
  EXPECT_EQ(cls(*t, "0000:18:00.0", "0000:e7:00.0"), "SYS");  // GPU0 socket 0, GPU4 socket 1
  EXPECT_EQ(cls(*t, "0000:18:00.0", "0000:19:00.0"), "PHB");  // own root ports, one host bridge
  EXPECT_EQ(nearestNicName(*t, "0000:e7:00.0"), "rdmap197s0");
  EXPECT_EQ(cls(*t, "0000:e7:00.0", "0000:c5:00.0"), "PHB");
  EXPECT_EQ(cls(*t, "0000:18:00.0", "0000:c5:00.0"), "SYS");
  EXPECT_EQ(t->pus.size(), 96u);
}

// HGX A100 NCCL dump: NVLink to six NVSwitches that appear only as <nvlink>
// targets; mlx5_bond_1..4 sit under the same upper switch as GPU 1/3/5/7,
// which hang one switch lower: two switches, PXB (as DGX A100's nvidia-smi says).
TEST(TopologyMachines, HgxA100NcclDump) {
  auto t = load("hgx-a100-8gpu-nvswitch-cx6.nccl-topo.xml");
  EXPECT_EQ(t->gpus().size(), 8u);
  EXPECT_EQ(t->nics().size(), 5u);
  EXPECT_EQ(rdmaNics(*t), 5);
  EXPECT_EQ(t->cpuNodes().size(), 2u);
  EXPECT_EQ(t->nvSwitches().size(), 6u);
  for (int a : t->gpus()) {
    for (int b : t->gpus()) {
      if (a != b) {
        EXPECT_EQ(path(*t, a, b).cls, PathClass::kNvl);
      }
    }
  }
  EXPECT_EQ(nearestNicName(*t, "0000:19:00.0"), "mlx5_bond_1");  // GPU 1
  EXPECT_EQ(cls(*t, "0000:19:00.0", "0000:1a:00.0"), "PXB");
  EXPECT_EQ(nearestNicName(*t, "0000:b3:00.0"), "mlx5_bond_4");  // GPU 7
  EXPECT_EQ(cls(*t, "0000:13:00.0", "0000:06:00.0"), "PHB");     // GPU 0 and mlx5_bond_0 on the root
  EXPECT_EQ(cls(*t, "0000:13:00.0", "0000:b4:00.0"), "SYS");
  // count="2" per switch, sm="80": 12 lanes of 20 GB/s into the fabric.
  EXPECT_DOUBLE_EQ(path(*t, bus(*t, "0000:13:00.0"), bus(*t, "0000:19:00.0")).bandwidthGBs, 240.0);
}

// AWS p4d: per socket two placeholder switches, each 2 A100 + 1 EFA at Gen3 x16.
TEST(TopologyMachines, P4dGpuAndEfaBehindOneSwitch) {
  auto t = load("aws-p4d-24xlarge-8xA100.nccl-topo.xml");
  EXPECT_EQ(t->gpus().size(), 8u);
  EXPECT_EQ(t->nics().size(), 4u);
  EXPECT_EQ(t->cpuNodes().size(), 2u);
  EXPECT_EQ(cls(*t, "0000:10:1c.0", "0000:10:1d.0"), "PIX");  // GPU 0, GPU 1
  EXPECT_EQ(cls(*t, "0000:10:1c.0", "0000:10:1b.0"), "PIX");  // GPU 0, NIC 0
  EXPECT_EQ(cls(*t, "0000:10:1c.0", "0000:20:1c.0"), "PHB");  // GPU 0, GPU 2: other switch
  EXPECT_EQ(cls(*t, "0000:10:1c.0", "0000:90:1c.0"), "SYS");  // GPU 0, GPU 4: other socket
  EXPECT_EQ(t->nodes[nearestNic(*t, bus(*t, "0000:a0:1d.0"))].pci.busId, "0000:a0:1b.0");
  EXPECT_DOUBLE_EQ(path(*t, bus(*t, "0000:10:1c.0"), bus(*t, "0000:10:1b.0")).bandwidthGBs, 12.0);  // 8 GT/s x16
  // affinity="000000ff,ffff0000,00ffffff": CPUs 0-23 and 48-71.
  const Node& numa0 = t->nodes[t->cpuNodeOfNuma(0)];
  ASSERT_EQ(numa0.cpus.size(), 48u);
  EXPECT_EQ(numa0.cpus.front(), 0);
  EXPECT_EQ(numa0.cpus[24], 48);
}

// Azure NDv4: four NUMA nodes, each one switch with 2 GPUs and 2 IB HCAs;
// the GPU-to-NUMA order is not bus order (0001/0002 on NUMA 1).
TEST(TopologyMachines, Ndv4FourNumaNodes) {
  auto t = load("azure-ndv4-8xA100.nccl-topo.xml");
  EXPECT_EQ(t->gpus().size(), 8u);
  EXPECT_EQ(t->nics().size(), 8u);
  EXPECT_EQ(t->cpuNodes().size(), 4u);
  EXPECT_EQ(t->nodes[t->rootCpu(bus(*t, "0001:00:00.0"))].numa, 1);
  EXPECT_EQ(cls(*t, "0003:00:00.0", "0004:00:00.0"), "PIX");
  EXPECT_EQ(cls(*t, "0003:00:00.0", "0001:00:00.0"), "SYS");
  EXPECT_EQ(cls(*t, "0003:00:00.0", "0103:00:00.0"), "PIX");    // its IB HCA (class 0x020700)
  EXPECT_EQ(t->nodes[t->gpus()[0]].pci.busId, "0001:00:00.0");  // CUDA order is bus order
}

// Dual EPYC 7551, hwloc 1.11 format: 8 NUMA nodes in 2 packages, no GPUs.
TEST(TopologyMachines, EpycHwloc1FormatImports) {
  auto t = load("dual-epyc-naples-8numa-cpuonly.hwloc1.xml");
  EXPECT_EQ(t->cpuNodes().size(), 8u);
  EXPECT_EQ(t->packageCount(), 2);
  EXPECT_EQ(t->gpus().size(), 0u);
  EXPECT_EQ(t->nics().size(), 5u);  // 4x i350 eno1-4 and the ConnectX-4 mlx5_0
  int mlx = t->findByName("mlx5_0");
  ASSERT_GE(mlx, 0);
  EXPECT_EQ(t->nodes[t->rootCpu(mlx)].numa, 5);
  EXPECT_EQ(t->pus.size(), 128u);
  EXPECT_EQ(t->numaDistances.size(), 8u);
}

// Only <cpu numaid> and bare <pci busid>: missing attributes are tolerated.
TEST(TopologyMachines, G5MinimalFileLoads) {
  auto t = load("aws-g5-48xlarge-8xA10G.nccl-topo.xml");
  EXPECT_EQ(t->cpuNodes().size(), 2u);
  EXPECT_EQ(t->gpus().size(), 0u);  // "GPUs are discovered at runtime"
  EXPECT_EQ(t->ofKind(NodeKind::kPciDevice).size(), 9u);
}

// --- rings ---------------------------------------------------------------

int socketCrossings(const std::vector<RankPlacement>& placed, const std::vector<int>& ring) {
  return countCrossings(placed, ring).packages;
}

TEST(TopologyRings, RoundRobinOverSocketsCrossesEachBoundaryTwice) {
  for (const char* name : {"aws-g4dn-metal-8xT4-pcie.hwloc.xml", "dual-epyc-naples-8numa-cpuonly.hwloc1.xml",
                           "aws-p4d-24xlarge-8xA100.nccl-topo.xml"}) {
    auto t = load(name);
    std::vector<RankPlacement> placed = simulatePlacements(*t, 8, "socket");
    EXPECT_EQ(placed[1].package, 1) << name;  // round robin: rank 1 on socket 1
    std::vector<int> ring = ringOrder(placed);
    EXPECT_EQ(ring, (std::vector<int>{0, 2, 4, 6, 1, 3, 5, 7})) << name;
    std::vector<int> identity{0, 1, 2, 3, 4, 5, 6, 7};
    EXPECT_EQ(socketCrossings(placed, identity), 8) << name;
    EXPECT_EQ(socketCrossings(placed, ring), 2) << name;
  }
}

TEST(TopologyRings, NumaRoundRobinKeepsSocketsThenNumaNodesTogether) {
  auto t = load("dual-epyc-naples-8numa-cpuonly.hwloc1.xml");  // NUMA 0-3 socket 0, 4-7 socket 1
  std::vector<RankPlacement> placed = simulatePlacements(*t, 16, "numa");
  std::vector<int> ring = ringOrder(placed);
  EXPECT_EQ(ring[0], 0);
  RingCrossings c = countCrossings(placed, ring);
  EXPECT_EQ(c.packages, 2);
  EXPECT_EQ(c.numas, 6);  // 4 NUMA nodes per socket: 3 changes inside each
}

// IBM x3950 M2: each NUMA node holds 4 packages, so NUMA is the outer group.
TEST(TopologyRings, PackagesInsideNumaNodes) {
  auto t = load("ibm-x3950m2-4numa-16pkg-cpuonly.hwloc.xml");
  EXPECT_EQ(t->cpuNodes().size(), 4u);
  EXPECT_EQ(t->packageCount(), 4);  // a NUMA node records its first package
  std::vector<RankPlacement> placed = simulatePlacements(*t, 8, "numa");
  std::vector<int> ring = ringOrder(placed);
  int numaChanges = 0;
  for (size_t i = 0; i < ring.size(); i++) numaChanges += placed[ring[i]].numa != placed[ring[(i + 1) % 8]].numa;
  EXPECT_EQ(numaChanges, 4);
}

TEST(TopologyRings, HostsFirstAndRankZeroLeads) {
  auto make = [](const char* host, int pkg, int numa) {
    RankPlacement p{};
    std::snprintf(p.host, sizeof(p.host), "%s", host);
    p.package = pkg;
    p.numa = numa;
    return p;
  };
  std::vector<RankPlacement> r = {make("b", 0, 0), make("a", 1, 1), make("b", 1, 1),
                                  make("a", 0, 0), make("b", 0, 0), make("a", 1, 1)};
  EXPECT_EQ(ringOrder(r), (std::vector<int>{0, 4, 2, 1, 5, 3}));
  EXPECT_EQ(countCrossings(r, ringOrder(r)).hosts, 2);
  EXPECT_EQ(ringOrder({}), std::vector<int>{});
  EXPECT_EQ(locality(r[0], r[4]), Locality::kSameNuma);
  EXPECT_EQ(locality(r[0], r[2]), Locality::kSameHost);
  EXPECT_EQ(locality(r[0], r[1]), Locality::kOtherHost);
}

// The cost model's CPU sharers: each host's bound ranks over the CPUs their
// bindings cover together, and the sockets they are bound to, the most
// crowded host's.
TEST(TopologyRings, RanksPerCpuAndSocketsFollowEachHostsBindings) {
  auto bound = [](const char* host, std::initializer_list<int> cpus) {
    RankPlacement p{};
    std::snprintf(p.host, sizeof(p.host), "%s", host);
    p.package = -1;
    for (int c : cpus) p.cpuMask[c / 64] |= uint64_t{1} << (c % 64);
    return p;
  };
  auto ranksPerCpu = [](const std::vector<RankPlacement>& ranks) { return mostCrowdedHost(ranks).ranksPerCpu; };
  auto sockets = [](const std::vector<RankPlacement>& ranks) { return mostCrowdedHost(ranks).sockets; };
  // Host a: 3 ranks on CPUs 0-1 (two of them both on CPU 0); host b: 2 on
  // CPUs 64 and 700.
  EXPECT_DOUBLE_EQ(
      ranksPerCpu({bound("a", {0}), bound("a", {0}), bound("a", {1}), bound("b", {64}), bound("b", {700})}), 1.5);
  EXPECT_DOUBLE_EQ(ranksPerCpu({bound("a", {0, 1, 2, 3}), bound("a", {0, 1, 2, 3})}), 1);  // fewer than CPUs
  EXPECT_DOUBLE_EQ(ranksPerCpu({bound("a", {}), bound("a", {})}), 1);                      // bindings unknown
  // A rank whose binding is unknown adds no CPU and counts for none.
  EXPECT_DOUBLE_EQ(ranksPerCpu({bound("a", {0}), bound("a", {1}), bound("a", {})}), 1);
  EXPECT_DOUBLE_EQ(ranksPerCpu({}), 1);
  EXPECT_EQ(sockets({}), 1);
  // The host of fewest CPUs: a's 2 (b's cover 3, c's none known).
  EXPECT_EQ(mostCrowdedHost({bound("a", {0}), bound("a", {1}), bound("b", {64, 65, 66}), bound("c", {})}).fewestCpus,
            2);
  EXPECT_EQ(mostCrowdedHost({bound("a", {})}).fewestCpus, 0);
  // mpirun's --map-by core on a machine's files: a rank per core until the
  // cores run out, then the ranks share them; --map-by socket alternates
  // the two sockets.
  auto t = load("aws-g4dn-metal-8xT4-pcie.hwloc.xml");
  std::set<std::pair<int, int>> cores;
  for (const Pu& pu : t->pus) cores.insert({pu.package, pu.core});
  const int n = static_cast<int>(cores.size());
  ASSERT_EQ(n, 48);
  EXPECT_DOUBLE_EQ(ranksPerCpu(simulatePlacements(*t, 8, "core")), 1);
  EXPECT_DOUBLE_EQ(ranksPerCpu(simulatePlacements(*t, n, "socket")), 1);
  EXPECT_DOUBLE_EQ(ranksPerCpu(simulatePlacements(*t, 2 * n, "core")), 2);
  EXPECT_EQ(sockets(simulatePlacements(*t, 8, "socket")), 2);
  EXPECT_EQ(sockets(simulatePlacements(*t, 8, "core")), 1);
  std::vector<RankPlacement> unbound = simulatePlacements(*t, 4, "socket");
  for (RankPlacement& p : unbound) p.package = -1;  // each bound across sockets
  EXPECT_EQ(sockets(unbound), 1);
}

TEST(TopologyRings, OwnPlacementFollowsTheBinding) {
  auto t = detectTopology();
  ASSERT_FALSE(t->pus.empty());
  const Pu pu = t->pus.back();
  RankPlacement p{};
  std::thread([&] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(pu.os, &set);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(set), &set), 0);
    p = ownPlacement(*t);
  }).join();
  EXPECT_EQ(p.firstCpu, pu.os);
  EXPECT_EQ(p.cpuCount, 1);
  EXPECT_EQ(p.numa, pu.numa);
  EXPECT_EQ(p.package, pu.package);
  EXPECT_NE(p.host[0], '\0');
  EXPECT_TRUE(p.cpuMask[pu.os / 64] & (uint64_t{1} << (pu.os % 64)));
}

// --- dump and load -------------------------------------------------------

TEST(TopologyFiles, DumpLoadDumpIsStableForEveryFixture) {
  for (const char* name : {"nvidia-dgx2-16xV100-nvswitch.hwloc.xml", "llnl-pascal-2xP100-pcie-switch-mlx5.hwloc.xml",
                           "aws-g4dn-metal-8xT4-pcie.hwloc.xml", "hgx-a100-8gpu-nvswitch-cx6.nccl-topo.xml",
                           "aws-p4d-24xlarge-8xA100.nccl-topo.xml", "azure-ndv4-8xA100.nccl-topo.xml",
                           "dual-epyc-naples-8numa-cpuonly.hwloc1.xml", "aws-g5-48xlarge-8xA10G.nccl-topo.xml",
                           "hgx-h100-8gpu-nvswitch-vm.nccl-topo.xml", "aws-p5-48xlarge-8xH100-32efa.nccl-topo.xml",
                           "azure-ndv5-8xH100.nccl-topo.xml", "azure-ndv2-8xV100.nccl-topo.xml"}) {
    auto t = load(name);
    std::string first = ncclXml(*t);
    std::string p = writeTemp("roundtrip.xml", first);
    auto again = readTopologyFile(p, nullptr);
    EXPECT_EQ(ncclXml(*again), first) << name;
    // The graph survives, not just the text.
    EXPECT_EQ(again->gpus().size(), t->gpus().size()) << name;
    EXPECT_EQ(again->nics().size(), t->nics().size()) << name;
    std::vector<int> g1 = t->gpus(), g2 = again->gpus();
    for (size_t a = 0; a < g1.size() && a < g2.size(); a++) {
      for (size_t b = 0; b < g1.size() && b < g2.size(); b++) {
        EXPECT_EQ(path(*again, g2[a], g2[b]).cls, path(*t, g1[a], g1[b]).cls) << name << " GPU" << a << "-GPU" << b;
      }
    }
  }
}

TEST(TopologyFiles, LoadTopologyDumpsWhatItDetected) {
  std::string dump = tempPath("dump.xml");
  auto t = loadTopology("", dump);
  std::string text = slurp(dump);
  EXPECT_EQ(text, ncclXml(*t));
  auto again = loadTopology(dump, "");
  EXPECT_EQ(ncclXml(*again), text);
}

// Fill-in: NUMA 0's CPUs are missing from the g5 file; every machine has a
// NUMA node 0, so detection supplies them. NUMA 1 is not on a 1-node test
// machine and stays as the file says.
TEST(TopologyFiles, DetectionFillsWhatTheFileLeavesOut) {
  auto detected = detectTopology();
  auto t = readTopologyFile(fixture("aws-g5-48xlarge-8xA10G.nccl-topo.xml"), detected.get());
  const Node& numa0 = t->nodes[t->cpuNodeOfNuma(0)];
  EXPECT_EQ(numa0.cpus, detected->nodes[detected->cpuNodeOfNuma(0)].cpus);
  auto p4d = readTopologyFile(fixture("aws-p4d-24xlarge-8xA100.nccl-topo.xml"), detected.get());
  EXPECT_EQ(p4d->nodes[p4d->cpuNodeOfNuma(0)].cpus.size(), 48u);  // the file's affinity wins
}

// --- malformed files -----------------------------------------------------

TEST(TopologyFiles, TruncatedFileNamesFileAndLine) {
  std::string full = slurp(fixture("aws-p4d-24xlarge-8xA100.nccl-topo.xml"));
  std::string cut = full.substr(0, full.find("<!-- GPU 2 -->"));
  std::string msg = errorOf("truncated.xml", cut);
  EXPECT_NE(msg.find("not well-formed XML"), std::string::npos) << msg;
  EXPECT_NE(msg.find("truncated.xml:2"), std::string::npos) << msg;  // libxml2 reports the end of the text, line 2x
}

TEST(TopologyFiles, WrongVersion) {
  std::string msg = errorOf("version.xml", "<system version=\"2\">\n  <cpu numaid=\"0\"/>\n</system>\n");
  EXPECT_NE(msg.find("version.xml:1:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("version \"2\""), std::string::npos) << msg;
  msg = errorOf("hwloc3.xml", "<?xml version=\"1.0\"?>\n<topology version=\"3.0\">\n</topology>\n");
  EXPECT_NE(msg.find("hwloc3.xml:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("3.0"), std::string::npos) << msg;
}

// A known element out of place would lose a device: refused (unknown names
// are skipped with a warning, as NCCL does: nccl_xml_test.cc).
TEST(TopologyFiles, MisplacedElement) {
  std::string msg = errorOf("misplaced.xml",
                            "<system version=\"1\">\n  <cpu numaid=\"0\">\n    <gpu dev=\"0\" sm=\"90\"/>\n"
                            "  </cpu>\n</system>\n");
  EXPECT_NE(msg.find("misplaced.xml:3: <gpu> cannot appear inside <cpu> (expected <pci> or <nic>)"), std::string::npos)
      << msg;
}

TEST(TopologyFiles, BadBusId) {
  std::string msg = errorOf("busid.xml",
                            "<system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci busid=\"0000:01:00.0\"/>\n"
                            "    <pci busid=\"zz\" class=\"0x030200\"/>\n  </cpu>\n</system>\n");
  EXPECT_NE(msg.find("busid.xml:4: <pci> has bus id 'zz' which is not a PCI address"), std::string::npos) << msg;
}

TEST(TopologyFiles, ContradictionsAreRejected) {
  const std::string head = "<system version=\"1\">\n  <cpu numaid=\"0\" affinity=\"0000000f\">\n";
  std::string msg = errorOf("dup.xml", head +
                                           "    <pci busid=\"0000:01:00.0\"/>\n    <pci busid=\"0000:01:00.0\"/>\n"
                                           "  </cpu>\n</system>\n");
  EXPECT_NE(msg.find("dup.xml:4:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("already used on line 3"), std::string::npos) << msg;
  msg = errorOf("overlap.xml", head + "  </cpu>\n  <cpu numaid=\"1\" affinity=\"00000018\"/>\n</system>\n");
  EXPECT_NE(msg.find("overlap.xml:4:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("CPU 3"), std::string::npos) << msg;
  msg = errorOf("gpuonbridge.xml", head +
                                       "    <pci busid=\"0000:01:00.0\" class=\"0x060400\">\n      <gpu dev=\"0\"/>\n"
                                       "    </pci>\n  </cpu>\n</system>\n");
  EXPECT_NE(msg.find("gpuonbridge.xml:3:"), std::string::npos) << msg;
  msg = errorOf("nvlink.xml", head +
                                  "    <pci busid=\"0000:01:00.0\" class=\"0x030200\">\n      <gpu dev=\"0\">\n"
                                  "        <nvlink target=\"0000:02:00.0\" count=\"4\" tclass=\"0x030200\"/>\n"
                                  "      </gpu>\n    </pci>\n    <pci busid=\"0000:02:00.0\" class=\"0x020000\"/>\n"
                                  "  </cpu>\n</system>\n");
  EXPECT_NE(msg.find("nvlink.xml:5: <nvlink> target 0000:02:00.0 is a NIC, not a GPU or NVSwitch"), std::string::npos)
      << msg;
  msg = errorOf("numaid.xml", head + "  </cpu>\n  <cpu numaid=\"0\"/>\n</system>\n");
  EXPECT_NE(msg.find("numaid.xml:4:"), std::string::npos) << msg;
  msg = errorOf("badnum.xml", "<system version=\"1\">\n  <cpu numaid=\"zero\"/>\n</system>\n");
  EXPECT_NE(msg.find("badnum.xml:2:"), std::string::npos) << msg;
}

TEST(TopologyFiles, MissingFileAndForeignRoot) {
  try {
    readTopologyFile(tempPath("does-not-exist.xml"), nullptr);
    ADD_FAILURE() << "accepted a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
  std::string msg = errorOf("html.xml", "<html>\n</html>\n");
  EXPECT_NE(msg.find("neither NCCL's <system> nor hwloc's <topology>"), std::string::npos) << msg;
}

// --- vocabulary ----------------------------------------------------------

TEST(TopologyVocabulary, PciFigures) {
  EXPECT_DOUBLE_EQ(pciUsableGBs("16 GT/s", 16), 24.0);
  EXPECT_DOUBLE_EQ(pciUsableGBs("8 GT/s", 16), 12.0);
  EXPECT_DOUBLE_EQ(pciUsableGBs("32 GT/s PCIe/s", 16), 48.0);  // p5's odd literal
  EXPECT_EQ(normalizeBusId("0000:1A:00.0").value_or(""), "0000:1a:00.0");
  EXPECT_FALSE(normalizeBusId("0000:1a:00").has_value());
  std::vector<int> cpus;
  ASSERT_TRUE(parseAffinity("000000ff,ffff0000,00ffffff", &cpus));
  EXPECT_EQ(formatAffinity(cpus, 3), "000000ff,ffff0000,00ffffff");
  EXPECT_FALSE(parseAffinity("xyz", &cpus));
  PathClass c;
  EXPECT_TRUE(parsePathClass("PXB", &c));
  EXPECT_EQ(c, PathClass::kPxb);
}

}  // namespace
}  // namespace loom::topo

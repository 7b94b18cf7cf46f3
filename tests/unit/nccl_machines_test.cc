// NCCL topology files of NVSwitch-era machines (tests/data/topologies, see
// SOURCES.md there): each loads with the path classes a person can read off
// the file.
#include <gtest/gtest.h>

#include "topology/paths.h"
#include "topology/topology_file.h"

namespace loom::topo {
namespace {

std::unique_ptr<Topology> load(const std::string& name) {
  return readTopologyFile(std::string(LOOM_TEST_DATA_DIR) + "/topologies/" + name, nullptr);
}

std::string cls(const Topology& t, const std::string& a, const std::string& b) {
  int ia = t.findBusId(a), ib = t.findBusId(b);
  EXPECT_GE(ia, 0) << a;
  EXPECT_GE(ib, 0) << b;
  return ia < 0 || ib < 0 ? "?" : pathClassName(path(t, ia, ib).cls);
}

// Rows of the class matrix between the given nodes, "X" on the diagonal,
// as loom-topo prints it.
std::vector<std::string> matrix(const Topology& t, const std::vector<int>& ids) {
  std::vector<std::string> rows;
  for (int a : ids) {
    std::string row;
    for (int b : ids) row += std::string(row.empty() ? "" : " ") + (a == b ? "X" : pathClassName(path(t, a, b).cls));
    rows.push_back(row);
  }
  return rows;
}

// HGX H100 as NCCL 2.27 dumps it where the NVSwitches are not visible: each
// GPU one <nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/>.
// Every GPU pair NVL at 18 x 20.6 GB/s; each GPU PIX to its own CX7, PHB to the
// other NICs of its socket, SYS across.
TEST(NcclMachines, HgxH100NvSwitchPlaceholder) {
  auto t = load("hgx-h100-8gpu-nvswitch-vm.nccl-topo.xml");
  ASSERT_EQ(t->gpus().size(), 8u);
  ASSERT_EQ(t->nics().size(), 8u);
  EXPECT_EQ(t->cpuNodes().size(), 2u);
  ASSERT_EQ(t->nvSwitches().size(), 1u);
  EXPECT_EQ(t->nodes[t->nvSwitches()[0]].pci.busId, "fffffff:ff:ff.0");
  EXPECT_TRUE(t->warnings.empty());
  std::vector<int> ids = t->gpus();
  for (int n : t->nics()) ids.push_back(n);
  std::vector<std::string> expected = {
      "X NVL NVL NVL NVL NVL NVL NVL PIX PHB PHB PHB SYS SYS SYS SYS",
      "NVL X NVL NVL NVL NVL NVL NVL PHB PIX PHB PHB SYS SYS SYS SYS",
      "NVL NVL X NVL NVL NVL NVL NVL PHB PHB PIX PHB SYS SYS SYS SYS",
      "NVL NVL NVL X NVL NVL NVL NVL PHB PHB PHB PIX SYS SYS SYS SYS",
      "NVL NVL NVL NVL X NVL NVL NVL SYS SYS SYS SYS PIX PHB PHB PHB",
      "NVL NVL NVL NVL NVL X NVL NVL SYS SYS SYS SYS PHB PIX PHB PHB",
      "NVL NVL NVL NVL NVL NVL X NVL SYS SYS SYS SYS PHB PHB PIX PHB",
      "NVL NVL NVL NVL NVL NVL NVL X SYS SYS SYS SYS PHB PHB PHB PIX",
      "PIX PHB PHB PHB SYS SYS SYS SYS X PHB PHB PHB SYS SYS SYS SYS",
      "PHB PIX PHB PHB SYS SYS SYS SYS PHB X PHB PHB SYS SYS SYS SYS",
      "PHB PHB PIX PHB SYS SYS SYS SYS PHB PHB X PHB SYS SYS SYS SYS",
      "PHB PHB PHB PIX SYS SYS SYS SYS PHB PHB PHB X SYS SYS SYS SYS",
      "SYS SYS SYS SYS PIX PHB PHB PHB SYS SYS SYS SYS X PHB PHB PHB",
      "SYS SYS SYS SYS PHB PIX PHB PHB SYS SYS SYS SYS PHB X PHB PHB",
      "SYS SYS SYS SYS PHB PHB PIX PHB SYS SYS SYS SYS PHB PHB X PHB",
      "SYS SYS SYS SYS PHB PHB PHB PIX SYS SYS SYS SYS PHB PHB PHB X",
  };
  EXPECT_EQ(matrix(*t, ids), expected);
  for (int i = 0; i < 8; i++) {
    int gpu = t->gpus()[i];
    EXPECT_EQ(t->nodes[nearestNic(*t, gpu)].name, "mlx5_" + std::to_string(i));
    EXPECT_TRUE(t->nodes[t->nics()[i]].rdma);
    for (int j = 0; j < 8; j++) {
      if (i != j) {
        EXPECT_NEAR(path(*t, gpu, t->gpus()[j]).bandwidthGBs, 370.8, 1e-9);
      }
    }
  }
  EXPECT_DOUBLE_EQ(path(*t, t->gpus()[0], t->nics()[0]).bandwidthGBs, 48.0);  // Gen5 x16
  EXPECT_EQ(t->nodes[t->cpuNodes()[1]].cpus.size(), 112u);                   // 56-111,168-223
}

// Azure NDv5 (injection-style: no <gpu>, no <nvlink>; NCCL adds NVLink from
// NVML at run time, so the file alone gives PCI classes): per NUMA node 4
// placeholder switches, each 1 H100 + 1 NDR HCA.
TEST(NcclMachines, Ndv5H100FileAlone) {
  auto t = load("azure-ndv5-8xH100.nccl-topo.xml");
  EXPECT_EQ(t->gpus().size(), 8u);
  EXPECT_EQ(t->nics().size(), 8u);
  EXPECT_EQ(t->nvSwitches().size(), 0u);
  EXPECT_EQ(t->cpuNodes().size(), 2u);
  EXPECT_EQ(cls(*t, "0001:00:00.0", "0101:00:00.0"), "PIX");  // GPU 0 and its HCA
  EXPECT_EQ(cls(*t, "0001:00:00.0", "0002:00:00.0"), "PHB");  // next switch, same NUMA node
  EXPECT_EQ(cls(*t, "0001:00:00.0", "0009:00:00.0"), "SYS");
  EXPECT_EQ(cls(*t, "0008:00:00.0", "0104:00:00.0"), "PIX");  // 0008 pairs with 0104
  for (int n : t->nics()) EXPECT_TRUE(t->nodes[n].rdma);      // class 0x020700
  EXPECT_DOUBLE_EQ(path(*t, t->findBusId("0001:00:00.0"), t->findBusId("0101:00:00.0")).bandwidthGBs, 48.0);
  EXPECT_EQ(t->nodes[t->cpuNodeOfNuma(1)].cpus.size(), 48u);  // affinity "ffffffff,ffff0000,00000000"
}

// Azure NDv2: 8 V100 straight on the CPUs (own PCI domains), one IB HCA on NUMA 0.
TEST(NcclMachines, Ndv2V100FileAlone) {
  auto t = load("azure-ndv2-8xV100.nccl-topo.xml");
  EXPECT_EQ(t->gpus().size(), 8u);
  ASSERT_EQ(t->nics().size(), 1u);
  EXPECT_EQ(cls(*t, "0001:00:00.0", "0004:00:00.0"), "PHB");
  EXPECT_EQ(cls(*t, "0001:00:00.0", "0005:00:00.0"), "SYS");
  EXPECT_EQ(cls(*t, "0001:00:00.0", "0101:00:00.0"), "PHB");
  EXPECT_EQ(cls(*t, "0008:00:00.0", "0101:00:00.0"), "SYS");
  EXPECT_EQ(t->nodes[nearestNic(*t, t->findBusId("0005:00:00.0"))].pci.busId, "0101:00:00.0");
  EXPECT_DOUBLE_EQ(path(*t, t->findBusId("0001:00:00.0"), t->cpuNodeOfNuma(0)).bandwidthGBs, 24.0);  // Gen4 x16
}

// AWS p5: switches and bare NIC bus ids only ("GPUs are not reported"), at
// the odd link_speed "32 GT/s PCIe/s": 8 switches of 4 devices each.
TEST(NcclMachines, P5BareBusIds) {
  auto t = load("aws-p5-48xlarge-8xH100-32efa.nccl-topo.xml");
  EXPECT_EQ(t->gpus().size(), 0u);
  EXPECT_EQ(t->ofKind(NodeKind::kPciSwitch).size(), 8u);
  EXPECT_EQ(t->ofKind(NodeKind::kPciDevice).size(), 32u);
  EXPECT_EQ(cls(*t, "0000:4f:00.0", "0000:52:00.0"), "PIX");
  EXPECT_EQ(cls(*t, "0000:4f:00.0", "0000:60:00.0"), "PHB");
  EXPECT_EQ(cls(*t, "0000:4f:00.0", "0000:93:00.0"), "SYS");
  EXPECT_DOUBLE_EQ(path(*t, t->findBusId("0000:4f:00.0"), t->findBusId("0000:45:00.0")).bandwidthGBs, 48.0);
  EXPECT_TRUE(t->warnings.empty());
}

// Two GB200 compute trays of one NVL72 domain as NCCL dumps a multi-node
// NVLink job: the <cpu> elements of both hosts (host_hash), with the same
// NUMA ids and bus ids. Loom reads the first host's, as NCCL does when it
// loads the file, and says what it skipped: 4 B200 (sm 100) all NVL through
// the hidden NVSwitches at 18 x 40.1 GB/s, 4 NICs, 2 Grace NUMA nodes.
TEST(NcclMachines, Gb200MultiNodeNvlinkDumpReadsFirstHost) {
  std::string file = std::string(LOOM_TEST_DATA_DIR) + "/topologies/gb200-nvl72-2trays-mnnvl.nccl-topo.xml";
  auto t = load("gb200-nvl72-2trays-mnnvl.nccl-topo.xml");
  EXPECT_EQ(t->gpus().size(), 4u);
  EXPECT_EQ(t->nics().size(), 4u);
  EXPECT_EQ(t->cpuNodes().size(), 2u);
  EXPECT_EQ(t->nvSwitches().size(), 1u);
  for (int c : t->cpuNodes()) {
    EXPECT_EQ(t->nodes[c].extra, (Attributes{{"host_hash", "0x4a1d5e3f0c2b7a91"}}));
    EXPECT_EQ(t->nodes[c].cpus.size(), 72u);
  }
  for (int a : t->gpus()) {
    for (int b : t->gpus()) {
      if (a == b) continue;
      Path p = path(*t, a, b);
      EXPECT_EQ(p.cls, PathClass::kNvl);
      EXPECT_NEAR(p.bandwidthGBs, 18 * 40.1, 1e-9);
    }
  }
  EXPECT_EQ(cls(*t, "0008:01:00.0", "0000:03:00.0"), "PHB");
  EXPECT_EQ(cls(*t, "0008:01:00.0", "0010:03:00.0"), "SYS");
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_EQ(t->warnings[0],
            file + ":66: the file describes 2 hosts (different host_hash values: NCCL's dump of a multi-node NVLink "
                   "job); Loom reads the first, host_hash 0x4a1d5e3f0c2b7a91 (the <cpu> on line 2), as NCCL does when "
                   "it loads a topology file (it takes every <cpu> for its own host and keeps the first element of "
                   "each bus id), and skipped 2 <cpu> of the other hosts, from this line on, with 4 GPUs and 4 NICs");
}

}  // namespace
}  // namespace loom::topo

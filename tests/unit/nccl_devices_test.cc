// NCCL topology XML: several devices where Loom used to see one (MLOPart's
// two GPUs on one PCI function) and ports that are no network device
// (<net net="0">), read as NCCL's ncclTopoAddGpuSub / ncclTopoAddNic do
// (src/graph/topo.cc). The rules for single elements are in nccl_xml_test.cc.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <tuple>

#include "base/error.h"
#include "loom_topo/report.h"
#include "support/topology_text.h"
#include "topology/nccl_xml.h"
#include "topology/paths.h"
#include "topology/topology_file.h"

namespace loom::topo {
namespace {

std::string nvlink(const std::string& target, int count, const std::string& tclass) {
  return "        <nvlink target=\"" + target + "\" count=\"" + std::to_string(count) + "\" tclass=\"" + tclass + "\"/>\n";
}

PathClass gpuPair(const Topology& t, int a, int b) { return path(t, t.gpus()[a], t.gpus()[b]).cls; }

std::string partGpu(int dev, int rank, const std::string& mlopart, const std::string& nvlinks) {
  return "      <gpu dev=\"" + std::to_string(dev) + "\" sm=\"100\" rank=\"" + std::to_string(rank) +
         "\" gdr=\"1\" mlopart=\"" + mlopart + "\">\n" + nvlinks + "      </gpu>\n";
}

std::string pciOf(const std::string& bus, const std::string& cls, const std::string& body) {
  return "    <pci busid=\"" + bus + "\" class=\"" + cls + "\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n" +
         body + "    </pci>\n";
}

// MLOPart (R200/GB300): two <gpu mlopart="0|1"> under one <pci> are two GPUs
// on one bus id, each with half the NVLink lanes' bandwidth (NCCL's
// ncclTopoAddGpuSub / ncclTopoAddNvLinks); a GPU peer links to both halves.
// mlopart="-1" is NCCL's "not split".
TEST(NcclXmlDevices, MloPartSplitsAGpuInTwo) {
  std::string nvs = nvlink("fffffff:ffff:ff", 18, "0x068000");
  std::string body = pciOf("0000:01:00.0", "0x030200", partGpu(0, 0, "0", nvs) + partGpu(0, 1, "1", nvs)) +
                     pciOf("0000:02:00.0", "0x030200", partGpu(1, 2, "-1", nvs)) +
                     pciOf("0000:03:00.0", "0x030200", partGpu(2, 3, "-1", nvlink("0000:01:00.0", 4, "0x030200")));
  auto t = loadText("mlo.xml", oneCpu(body));
  ASSERT_EQ(t->gpus().size(), 4u);
  const Node &p0 = t->nodes[t->gpus()[0]], &p1 = t->nodes[t->gpus()[1]], &whole = t->nodes[t->gpus()[2]];
  EXPECT_EQ(p0.pci.busId, "0000:01:00.0");
  EXPECT_EQ(p1.pci.busId, "0000:01:00.0");
  EXPECT_EQ(std::make_tuple(p0.mloPart, p1.mloPart, whole.mloPart), std::make_tuple(0, 1, -1));
  EXPECT_EQ(std::make_tuple(p0.gpuRank, p1.gpuRank, p0.name, p1.name), std::make_tuple(0, 1, "GPU0", "GPU1"));
  EXPECT_EQ(p1.partitionOf, p0.id);
  EXPECT_EQ(p1.parent, p0.parent);
  EXPECT_EQ(t->gpusAtBusId("0000:01:00.0"), (std::vector<int>{p0.id, p1.id}));
  EXPECT_EQ(t->nvSwitches().size(), 1u);
  Path half = path(*t, p0.id, whole.id);
  EXPECT_EQ(half.cls, PathClass::kNvl);
  EXPECT_DOUBLE_EQ(half.bandwidthGBs, 18 * 40.1 / 2);
  EXPECT_EQ(gpuPair(*t, 0, 1), PathClass::kLoc);  // one GPU's two halves, as NCCL joins them
  EXPECT_DOUBLE_EQ(path(*t, p0.id, p1.id).bandwidthGBs, 2618);
  EXPECT_EQ(path(*t, p1.id, p0.id).cls, PathClass::kLoc);
  for (int part : {0, 1}) {
    Path direct = path(*t, t->gpus()[3], t->gpus()[part]);
    EXPECT_EQ(direct.cls, PathClass::kNvl);
    EXPECT_DOUBLE_EQ(direct.bandwidthGBs, 4 * 40.1 / 2);
  }
  EXPECT_TRUE(t->warnings.empty());
  std::string dump = ncclXml(*t);
  EXPECT_NE(dump.find("<gpu dev=\"0\" sm=\"100\" rank=\"0\" gdr=\"1\" mlopart=\"0\">"), std::string::npos) << dump;
  EXPECT_NE(dump.find("<gpu dev=\"0\" sm=\"100\" rank=\"1\" gdr=\"1\" mlopart=\"1\">"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("busid=\"0000:01:00.0\"", dump.find("busid=\"0000:01:00.0\"") + 1), std::string::npos) << dump;
  EXPECT_EQ(dump.find("target=\"0000:01:00.0\"", dump.find("target=\"0000:01:00.0\"") + 1), std::string::npos);
  EXPECT_EQ(ncclXml(*loadText("mlo2.xml", dump)), dump);
  std::ostringstream tree;
  printTree(tree, *t);
  EXPECT_NE(tree.str().find("GPU GPU0 [0000:01:00.0] partition 0 of 2"), std::string::npos) << tree.str();
  EXPECT_NE(tree.str().find("GPU GPU1 [0000:01:00.0] partition 1 of 2"), std::string::npos) << tree.str();
}

// The same partition twice is two ranks on one GPU (NCCL: two GPU nodes on one
// device, NVLinks from the first): one Loom GPU, the element kept, a warning.
// NCCL splits a GPU in two at most.
TEST(NcclXmlDevices, SecondGpuOfOnePartition) {
  std::string body = pciOf("0000:01:00.0", "0x030200",
                           partGpu(0, 0, "-1", "") + "      <gpu dev=\"0\" sm=\"100\" rank=\"1\" gdr=\"1\"/>\n");
  auto t = loadText("tworanks.xml", oneCpu(body));
  ASSERT_EQ(t->gpus().size(), 1u);
  EXPECT_EQ(t->nodes[t->gpus()[0]].gpuRank, 0);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_EQ(t->warnings[0], tempPrefix() + "tworanks.xml:6: a second <gpu> for the same device as the <gpu> on line 4 (two "
                                    "ranks on one GPU): Loom models the device once, keeps this element for the dump "
                                    "without its children, and reads NVLinks from the first, as NCCL does");
  std::string dump = ncclXml(*t);
  EXPECT_NE(dump.find("<gpu dev=\"0\" sm=\"100\" rank=\"1\" gdr=\"1\"/>"), std::string::npos) << dump;
  EXPECT_EQ(ncclXml(*loadText("tworanks2.xml", dump)), dump);
  EXPECT_NE(errorOf("mlo3.xml", oneCpu(pciOf("0000:01:00.0", "0x030200", partGpu(0, 0, "2", ""))))
                .find("mlo3.xml:4: <gpu> has mlopart=\"2\"; NCCL splits a GPU into at most two partitions (0 and 1)"),
            std::string::npos);
}

// <net net="0">: a port NCCL's network transport does not use (GIN- or
// CollNet-only, or fused into a virtual NIC); no "net" attribute is an older
// dump's port. Not a port, not a NIC of its own, not proof of RDMA; kept for
// the dump.
TEST(NcclXmlDevices, NetZeroIsNotAPort) {
  auto net = [](const std::string& name, int gdr, const std::string& extra) {
    return "        <net name=\"" + name + "\" dev=\"0\" speed=\"400000\" gdr=\"" + std::to_string(gdr) + "\"" + extra +
           "/>\n";
  };
  std::string body = pciOf("0000:04:00.0", "0x030200", partGpu(0, 0, "-1", "")) +
                     pciOf("0000:05:00.0", "0x020700", "      <nic>\n" + net("mlx5_0", 1, " net=\"0\" gin=\"1\"") +
                                                           "      </nic>\n") +
                     pciOf("0000:06:00.0", "0x020000", "      <nic>\n" + net("gin0", 1, " net=\"0\" gin=\"1\"") +
                                                           net("eth0", 0, " net=\"1\"") + "      </nic>\n") +
                     pciOf("0000:07:00.0", "0x020700", "      <nic>\n" + net("mlx5_2", 1, "") + "      </nic>\n");
  auto t = loadText("net0.xml", oneCpu(body));
  ASSERT_EQ(t->nics().size(), 2u);
  const Node& gin = t->nodes[t->findBusId("0000:05:00.0")];
  EXPECT_EQ(gin.kind, NodeKind::kPciDevice);
  EXPECT_FALSE(gin.rdma);
  EXPECT_EQ(gin.nonNetPorts.size(), 1u);
  const Node& eth = t->nodes[t->findBusId("0000:06:00.0")];
  EXPECT_EQ(eth.name, "eth0");
  ASSERT_EQ(eth.nets.size(), 1u);
  EXPECT_EQ(eth.nonNetPorts.size(), 1u);
  EXPECT_FALSE(eth.rdma);  // the gdr="1" was the GIN port's
  EXPECT_EQ(t->nodes[t->nics()[1]].name, "mlx5_2");
  EXPECT_EQ(t->nodes[nearestNic(*t, t->gpus()[0])].name, "mlx5_2");
  EXPECT_TRUE(t->warnings.empty());
  std::string dump = ncclXml(*t);
  EXPECT_NE(dump.find("<net name=\"mlx5_0\" speed=\"400000\" gdr=\"1\" dev=\"0\" net=\"0\" gin=\"1\"/>"),
            std::string::npos)
      << dump;
  EXPECT_EQ(ncclXml(*loadText("net02.xml", dump)), dump);
}

// Hosts are told apart by host_hash values (hex, any case); a <cpu> without
// one goes with the host that is read. Three hosts: one warning, at the first
// <cpu> skipped.
TEST(NcclXmlDevices, HostsByHostHash) {
  auto cpu = [](const std::string& hash, int numa, const std::string& gpuBus) {
    return "  <cpu " + hash + "numaid=\"" + std::to_string(numa) + "\">\n" +
           pciOf(gpuBus, "0x030200", partGpu(0, 0, "-1", "")) + "  </cpu>\n";
  };
  std::string text = "<system version=\"1\">\n" + cpu("host_hash=\"0xAB\" ", 0, "0000:01:00.0") +
                     cpu("", 1, "0000:02:00.0") + cpu("host_hash=\"0xab\" ", 2, "0000:03:00.0") +
                     cpu("host_hash=\"0xcd\" ", 0, "0000:01:00.0") + cpu("host_hash=\"0xef\" ", 1, "0000:02:00.0") +
                     "</system>\n";
  auto t = loadText("hosts.xml", text);
  EXPECT_EQ(t->cpuNodes().size(), 3u);
  EXPECT_EQ(t->gpus().size(), 3u);
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_NE(t->warnings[0].find(tempPrefix() + "hosts.xml:20: the file describes 3 hosts"), std::string::npos)
      << t->warnings[0];
  EXPECT_NE(t->warnings[0].find("host_hash 0xab (the <cpu> on line 2)"), std::string::npos) << t->warnings[0];
  EXPECT_NE(t->warnings[0].find("skipped 2 <cpu> of the other hosts, from this line on, with 2 GPUs and 0 NICs"),
            std::string::npos)
      << t->warnings[0];
  // One host (or none named) is no warning, and duplicates in it stay errors.
  std::string one = "<system version=\"1\">\n" + cpu("host_hash=\"0x1\" ", 0, "0000:01:00.0") +
                    cpu("host_hash=\"0x01\" ", 0, "0000:02:00.0") + "</system>\n";
  EXPECT_NE(errorOf("onehost.xml", one).find("onehost.xml:8: <cpu> numaid=\"0\" was already defined on line 2"),
            std::string::npos);
}

}  // namespace
}  // namespace loom::topo

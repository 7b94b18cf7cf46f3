// Topology files with numbers no int holds, and the path search that the
// reports of large machines depend on (docs/RELIABILITY.md, "Topology
// input"). Each case failed before its fix: an exception that was no
// loom::Error (std::terminate in loom-topo), a value silently wrapped into
// another, or a signed overflow.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "loom_topo/report.h"
#include "support/topology_text.h"
#include "topology/nccl_xml.h"
#include "topology/paths.h"
#include "topology/topology_file.h"

namespace loom::topo {
namespace {

std::string fixtureText(const std::string& name) {
  std::ifstream in(std::string(LOOM_TEST_DATA_DIR) + "/topologies/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The g4dn.metal export with one <info> value replaced (its first package's,
// on line 30).
std::string g4dnWithInfo(const std::string& name, const std::string& was, const std::string& value) {
  std::string text = fixtureText("aws-g4dn-metal-8xT4-pcie.hwloc.xml");
  std::string from = "<info name=\"" + name + "\" value=\"" + was + "\"/>";
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), "<info name=\"" + name + "\" value=\"" + value + "\"/>");
}

// A CPU family number beyond int: std::stoi would throw std::out_of_range out of the
// hwloc import, and loom-topo would end in std::terminate.
TEST(TopologyInput, HwlocCpuFamilyNumberBeyondIntIsRefusedWithItsLine) {
  std::string e = errorOf("family.xml", g4dnWithInfo("CPUFamilyNumber", "6", "4294967296"));
  EXPECT_NE(e.find("family.xml:30: <info name=\"CPUFamilyNumber\"> of <object type=\"Package\"> has "
                   "value=\"4294967296\", which is not a whole number from 0 to 2147483647"),
            std::string::npos)
      << e;
}

TEST(TopologyInput, HwlocCpuModelNumberThatIsNoNumberIsRefusedWithItsLine) {
  for (const char* bad : {"85x", "", "-1", " 85", "0x55", "99999999999999999999"}) {
    std::string e = errorOf("model.xml", g4dnWithInfo("CPUModelNumber", "85", bad));
    EXPECT_NE(e.find("model.xml:31: <info name=\"CPUModelNumber\"> of <object type=\"Package\"> has value=\"" +
                     std::string(bad) + "\", which is not a whole number"),
              std::string::npos)
        << e;
  }
}

TEST(TopologyInput, HwlocCpuIdentityNumbersReachTheDump) {
  auto t = readTopologyFile(writeTemp("g4dn.xml", g4dnWithInfo("CPUFamilyNumber", "6", "2147483647")), nullptr);
  const Node& cpu = t->nodes[t->cpuNodes().front()];
  EXPECT_EQ(cpu.familyId, 2147483647);
  EXPECT_EQ(cpu.modelId, 85);
  EXPECT_NE(ncclXml(*t).find("familyid=\"2147483647\" modelid=\"85\""), std::string::npos);
}

// NCCL XML attributes Loom keeps in an int were cast from 64 bits: numaid
// "4294967297" read as NUMA 1, familyid "4294967296" as 0.
TEST(TopologyInput, NcclIntAttributesBeyondIntAreRefusedWithTheirLine) {
  const std::string big = "4294967296";
  struct Case {
    std::string element, attr, text;
    int line;
  };
  auto gpu = [](const std::string& gpuAttrs, const std::string& inside = "") {
    return oneCpu("    <pci busid=\"0000:01:00.0\" class=\"0x030200\">\n      <gpu " + gpuAttrs + ">\n" + inside +
                  "      </gpu>\n    </pci>\n");
  };
  std::vector<Case> cases;
  for (const char* attr : {"numaid", "familyid", "modelid", "package"}) {
    std::string numaid = attr == std::string("numaid") ? "" : "numaid=\"0\" ";
    cases.push_back({"cpu", attr,
                     "<system version=\"1\">\n  <cpu " + numaid + "affinity=\"0000000f\" " + std::string(attr) + "=\"" +
                         big + "\"/>\n</system>\n",
                     2});
  }
  for (const char* attr : {"class", "vendor", "device", "subsystem_vendor", "subsystem_device", "link_width"}) {
    cases.push_back(
        {"pci", attr, oneCpu("    <pci busid=\"0000:01:00.0\" " + std::string(attr) + "=\"" + big + "\"/>\n"), 3});
  }
  for (const char* attr : {"dev", "rank", "gdr", "mlopart"}) {
    cases.push_back({"gpu", attr, gpu(std::string(attr) + "=\"" + big + "\""), 4});
  }
  cases.push_back({"gpu", "sm", gpu("sm=\"0x100000000\""), 4});  // hex, as NCCL may write it
  for (const char* attr : {"count", "tclass"}) {
    cases.push_back({"nvlink", attr,
                     gpu("dev=\"0\" sm=\"80\"",
                         "        <nvlink target=\"0000:02:00.0\" " + std::string(attr) + "=\"" + big + "\"/>\n"),
                     5});
  }
  for (const char* attr : {"port", "gdr"}) {
    cases.push_back(
        {"net", attr,
         oneCpu("    <nic>\n      <net name=\"eth0\" " + std::string(attr) + "=\"" + big + "\"/>\n    </nic>\n"), 4});
  }
  for (const Case& c : cases) {
    std::string e = errorOf("nccl_int.xml", c.text);
    std::string value = c.attr == "sm" ? "0x100000000" : big;
    EXPECT_NE(e.find("nccl_int.xml:" + std::to_string(c.line) + ": <" + c.element + "> has " + c.attr + "=\"" + value +
                     "\", which is beyond 2147483647"),
              std::string::npos)
        << c.element << " " << c.attr << ": " << e;
  }
}

TEST(TopologyInput, NcclIntAttributesUpToIntMaxLoad) {
  auto t =
      loadText("int_max.xml",
               "<system version=\"1\">\n  <cpu numaid=\"2147483647\" affinity=\"0000000f\" familyid=\"0x7fffffff\" "
               "package=\"2147483647\" memory=\"4294967296\"/>\n</system>\n");
  const Node& cpu = t->nodes[t->cpuNodes().front()];
  EXPECT_EQ(cpu.numa, 2147483647);
  EXPECT_EQ(cpu.familyId, 2147483647);
  EXPECT_EQ(cpu.package, 2147483647);
  EXPECT_EQ(cpu.memoryBytes, 4294967296u);  // a 64-bit attribute keeps 64 bits
}

// The tree summed the lanes of <nvlink> it keeps unresolved in an int (two
// of INT_MAX overflowed), read with atoi (0x12 was one lane, not 18).
TEST(TopologyInput, TreeSumsNvlinkLanesWithoutOverflowAndReadsThemAsTheReaderDoes) {
  auto t = loadText("lanes.xml",
                    oneCpu("    <pci busid=\"0000:01:00.0\" class=\"0x030200\">\n"
                           "      <gpu dev=\"0\" sm=\"90\">\n"
                           "        <nvlink target=\"0000:01:00.0\" count=\"2147483647\" tclass=\"0x030200\"/>\n"
                           "        <nvlink target=\"0000:01:00.0\" count=\"2147483647\" tclass=\"0x030200\"/>\n"
                           "        <nvlink target=\"0000:01:00.0\" count=\"0x12\" tclass=\"0x030200\"/>\n"
                           "      </gpu>\n    </pci>\n"));
  std::ostringstream tree;
  printTree(tree, *t);
  EXPECT_NE(tree.str().find("NVLink 4294967312 lanes to peers the file does not name"), std::string::npos)
      << tree.str();
}

// An NVLink of 2^31 - 1 lanes is 4.4e10 GB/s: the tree decided "whole
// number?" by casting to int, undefined for such a value (the nccl_xml
// fuzzer; tests/fuzz/regressions/nccl_xml/bandwidth-beyond-int-in-tree.xml).
TEST(TopologyInput, BandwidthBeyondIntPrintsAsAWholeNumber) {
  EXPECT_EQ(gbsString(44238199738.2), "44238199738.2 GB/s");
  EXPECT_EQ(gbsString(44000000000.0), "44000000000 GB/s");
  EXPECT_EQ(gbsString(24.0), "24 GB/s");
  EXPECT_EQ(gbsString(20.6), "20.6 GB/s");
}

// Four GPUs: 0-1 and 1-3 one lane each, 0-2 and 2-3 four lanes each. NVB
// from 0 to 3 goes through the first GPU (CUDA order) that NVLinks both,
// as NCCL's search does, not through the widest: PathFinder must keep that.
TEST(TopologyInput, NvbGoesThroughTheFirstGpuLinkedToBoth) {
  auto gpuPci = [](int i, const std::string& links) {
    return "    <pci busid=\"0000:0" + std::to_string(i + 1) + ":00.0\" class=\"0x030200\">\n      <gpu dev=\"" +
           std::to_string(i) + "\" sm=\"80\">\n" + links + "      </gpu>\n    </pci>\n";
  };
  auto link = [](int to, int lanes) {
    return "        <nvlink target=\"0000:0" + std::to_string(to + 1) + ":00.0\" count=\"" + std::to_string(lanes) +
           "\" tclass=\"0x030200\"/>\n";
  };
  auto t = loadText("nvb.xml", oneCpu(gpuPci(0, link(1, 1) + link(2, 4)) + gpuPci(1, link(3, 1)) +
                                      gpuPci(2, link(3, 4)) + gpuPci(3, "")));
  std::vector<int> g = t->gpus();
  ASSERT_EQ(g.size(), 4u);
  PathFinder paths(*t);
  Path p = paths.path(g[0], g[3]);
  EXPECT_EQ(p.cls, PathClass::kNvb);
  EXPECT_DOUBLE_EQ(p.bandwidthGBs, 20.0);  // via GPU1's one lane, not GPU2's four
  EXPECT_DOUBLE_EQ(p.latencyUs, 2 * kNvlLatencyUs);
  EXPECT_EQ(paths.path(g[3], g[0]).cls, PathClass::kNvb);
  EXPECT_EQ(paths.path(g[0], g[2]).cls, PathClass::kNvl);
  EXPECT_DOUBLE_EQ(paths.path(g[0], g[2]).bandwidthGBs, 80.0);
  EXPECT_EQ(paths.path(g[1], g[2]).cls, PathClass::kNvb);  // 1-0-2 and 1-3-2: either is NVB
  // The one-pair form agrees with the finder.
  EXPECT_DOUBLE_EQ(path(*t, g[0], g[3]).bandwidthGBs, 20.0);
}

// Every pair of every fixture, both ways round, through one PathFinder and
// through the one-pair form: a path does not depend on which end asks or on
// how the caller computes it (classes are symmetric, as NCCL's matrix is).
TEST(TopologyInput, PathFinderIsSymmetricAndAgreesWithThePairFormOnEveryFixture) {
  for (const char* name : {"nvidia-dgx2-16xV100-nvswitch.hwloc.xml", "hgx-a100-8gpu-nvswitch-cx6.nccl-topo.xml",
                           "hgx-h100-8gpu-nvswitch-vm.nccl-topo.xml", "gb200-nvl72-2trays-mnnvl.nccl-topo.xml",
                           "llnl-pascal-2xP100-pcie-switch-mlx5.hwloc.xml", "azure-ndv2-8xV100.nccl-topo.xml",
                           "aws-p5-48xlarge-8xH100-32efa.nccl-topo.xml"}) {
    auto t = readTopologyFile(std::string(LOOM_TEST_DATA_DIR) + "/topologies/" + name, nullptr);
    PathFinder paths(*t);
    std::vector<int> ids = matrixNodes(*t);
    for (int a : ids) {
      for (int b : ids) {
        Path ab = paths.path(a, b), ba = paths.path(b, a), one = path(*t, a, b);
        EXPECT_EQ(ab.cls, ba.cls) << name << " " << t->nodes[a].name << " " << t->nodes[b].name;
        EXPECT_EQ(ab.cls, one.cls) << name;
        EXPECT_DOUBLE_EQ(ab.bandwidthGBs, one.bandwidthGBs) << name;
        EXPECT_DOUBLE_EQ(ab.latencyUs, one.latencyUs) << name;
      }
      EXPECT_EQ(paths.nearestNic(a), nearestNic(*t, a)) << name;
    }
  }
}

}  // namespace
}  // namespace loom::topo

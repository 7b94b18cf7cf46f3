// NCCL topology XML: each thing NCCL's reader tolerates (src/graph/xml.cc,
// topo.cc) loads in Loom too, on a small file per rule; what cannot describe
// a machine is refused with file:line.
#include <gtest/gtest.h>

#include <fstream>

#include "base/error.h"
#include "topology/nccl_xml.h"
#include "topology/nccl_xml_internal.h"
#include "topology/paths.h"
#include "topology/pci.h"
#include "topology/topology_file.h"
#include "support/topology_text.h"

namespace loom::topo {
namespace {

// A GPU on its own PCI address with the given <gpu> body.
std::string gpu(const std::string& bus, const std::string& nvlinks) {
  return "    <pci busid=\"" + bus + "\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
         "      <gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\">\n" + nvlinks + "      </gpu>\n    </pci>\n";
}

std::string nvlink(const std::string& target, int count, const std::string& tclass) {
  return "        <nvlink target=\"" + target + "\" count=\"" + std::to_string(count) + "\" tclass=\"" + tclass + "\"/>\n";
}

PathClass gpuPair(const Topology& t, int a, int b) { return path(t, t.gpus()[a], t.gpus()[b]).cls; }

// --- NVLink targets ------------------------------------------------------

// The placeholder NCCL writes for an NVSwitch the machine does not show:
// "fffffff:ff:ff.0" (NCCL 2.27 dumps) and "fffffff:ffff:ff" (its writer's
// sentinel since 2.20). Both are one switch node; every GPU on it is NVL to
// every other, at 18 lanes x 20.6 GB/s (sm 90).
TEST(NcclXmlNvlink, HiddenNvSwitchPlaceholdersJoinOneFabric) {
  for (const std::string target : {"fffffff:ff:ff.0", "fffffff:ffff:ff", "FFFFFFF:FF:FF.0"}) {
    std::string body;
    const char* buses[] = {"0000:01:00.0", "0000:02:00.0", "0000:03:00.0"};
    for (const char* b : buses) body += gpu(b, nvlink(target, 18, "0x068000"));
    auto t = loadText("hidden.xml", oneCpu(body));
    ASSERT_EQ(t->gpus().size(), 3u) << target;
    ASSERT_EQ(t->nvSwitches().size(), 1u) << target;
    const Node& sw = t->nodes[t->nvSwitches()[0]];
    EXPECT_TRUE(sw.implicit);
    EXPECT_EQ(sw.pci.busId, std::string(target == "FFFFFFF:FF:FF.0" ? "fffffff:ff:ff.0" : target));
    EXPECT_EQ(sw.pci.classCode, 0x068000);
    for (int a = 0; a < 3; a++) {
      for (int b = 0; b < 3; b++) {
        if (a == b) continue;
        Path p = path(*t, t->gpus()[a], t->gpus()[b]);
        EXPECT_EQ(p.cls, PathClass::kNvl) << target << " GPU" << a << "-GPU" << b;
        EXPECT_NEAR(p.bandwidthGBs, 18 * 20.6, 1e-9);
      }
    }
    EXPECT_TRUE(t->warnings.empty()) << t->warnings.front();
    // The dump writes the placeholder back as it was, and reloads the same.
    std::string dump = ncclXml(*t);
    EXPECT_NE(dump.find("<nvlink target=\"" + sw.pci.busId + "\" count=\"18\" tclass=\"0x068000\"/>"), std::string::npos)
        << dump;
    EXPECT_EQ(ncclXml(*loadText("hidden2.xml", dump)), dump);
  }
}

// A VM that hides the peer writes the GPU's own bus id as the target: the
// file loads, the lanes are kept (dump and tree), one warning names the first
// such line and the count, and no GPU gets an NVLink path it does not have.
TEST(NcclXmlNvlink, SelfTargetIsKeptWarnedOnceAndMakesNoPath) {
  std::string body = gpu("0000:01:00.0", nvlink("0000:01:00.0", 12, "0x030200")) +
                     gpu("0000:02:00.0", nvlink("0000:02:00.0", 12, "0x030200"));
  auto t = loadText("self.xml", oneCpu(body));
  ASSERT_EQ(t->gpus().size(), 2u);
  EXPECT_EQ(t->nvSwitches().size(), 0u);
  for (const Link& l : t->links) EXPECT_NE(l.kind, LinkKind::kNvLink);
  EXPECT_EQ(gpuPair(*t, 0, 1), PathClass::kPhb);  // both straight on the CPU's root complex
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_EQ(t->warnings[0], tempPrefix() + "self.xml:5: <nvlink> of GPU 0000:01:00.0 names the GPU itself as its peer "
                                    "(2 such <nvlink> in this file), as VMs that hide NVLink peers write; their lane "
                                    "counts are kept, but no NVLink path is assumed");
  const Node& g0 = t->nodes[t->gpus()[0]];
  ASSERT_EQ(g0.gpuRawChildren.size(), 1u);
  EXPECT_EQ(g0.gpuRawChildren[0].name, "nvlink");
  std::string dump = ncclXml(*t);
  EXPECT_NE(dump.find("<nvlink target=\"0000:01:00.0\" count=\"12\" tclass=\"0x030200\"/>"), std::string::npos) << dump;
  EXPECT_NE(dump.find("<nvlink target=\"0000:02:00.0\" count=\"12\" tclass=\"0x030200\"/>"), std::string::npos) << dump;
  EXPECT_EQ(ncclXml(*loadText("self2.xml", dump)), dump);
}

// A dump from a job that used some GPUs names peers it does not list; NCCL
// drops those links, Loom too, with one warning.
TEST(NcclXmlNvlink, UnlistedGpuPeerIsWarnedNotRefused) {
  auto t = loadText("partial.xml", oneCpu(gpu("0000:01:00.0", nvlink("0000:02:00.0", 4, "0x030200") +
                                                                  nvlink("0000:03:00.0", 4, "0x030200"))));
  EXPECT_EQ(t->gpus().size(), 1u);
  EXPECT_EQ(t->links.size(), 1u);  // the PCI link only
  ASSERT_EQ(t->warnings.size(), 1u);
  EXPECT_NE(t->warnings[0].find("partial.xml:5: <nvlink> target 0000:02:00.0 is a GPU the file does not list "
                                "(2 such <nvlink> in this file"),
            std::string::npos)
      << t->warnings[0];
}

// GPU-to-GPU NVLink listed by both ends is one link; NVML's 8-digit domain
// ("00000000:02:00.0") names the same device as sysfs's 4-digit one.
TEST(NcclXmlNvlink, GpuPairsAndEightDigitDomains) {
  std::string body = gpu("0000:01:00.0", nvlink("00000000:02:00.0", 4, "0x030200")) +
                     gpu("00000000:02:00.0", nvlink("0000:01:00.0", 4, "0x030200")) + gpu("0000:03:00.0", "");
  auto t = loadText("pair.xml", oneCpu(body));
  ASSERT_EQ(t->gpus().size(), 3u);
  int nvlinks = 0;
  for (const Link& l : t->links) nvlinks += l.kind == LinkKind::kNvLink;
  EXPECT_EQ(nvlinks, 1);
  EXPECT_EQ(gpuPair(*t, 0, 1), PathClass::kNvl);
  EXPECT_EQ(gpuPair(*t, 0, 2), PathClass::kPhb);
  EXPECT_DOUBLE_EQ(path(*t, t->gpus()[0], t->gpus()[1]).bandwidthGBs, 4 * 20.6);
  EXPECT_EQ(t->nodes[t->gpus()[1]].pci.busId, "0000:02:00.0");
}

// tclass 0x068001 is NCCL's "CPU" (POWER9): not a switch, no path.
TEST(NcclXmlNvlink, CpuTargetIsNotASwitch) {
  auto t = loadText("p9.xml", oneCpu(gpu("0004:04:00.0", nvlink("0007:00:00.0", 3, "0x068001")) +
                                     gpu("0004:05:00.0", nvlink("0007:00:00.1", 3, "0x068001"))));
  EXPECT_EQ(t->nvSwitches().size(), 0u);
  EXPECT_EQ(gpuPair(*t, 0, 1), PathClass::kPhb);
  EXPECT_TRUE(t->warnings.empty());
}

TEST(NcclXmlNvlink, GpuTargetThatIsNoAddressIsRefused) {
  std::string msg = errorOf("badtarget.xml", oneCpu(gpu("0000:01:00.0", nvlink("gpu-one", 4, "0x030200"))));
  EXPECT_NE(msg.find("badtarget.xml:5: <nvlink> has target 'gpu-one' which is not a PCI address"), std::string::npos)
      << msg;
}

// --- attributes and elements NCCL tolerates ------------------------------

TEST(NcclXmlValues, NumbersAsNcclWritesThem) {
  EXPECT_EQ(parseNcclNumber("16"), 16);
  EXPECT_EQ(parseNcclNumber("0x10de"), 0x10de);
  EXPECT_EQ(parseNcclNumber("0X68000"), 0x68000);
  EXPECT_EQ(parseNcclNumber(" 42 "), 42);
  EXPECT_EQ(parseNcclNumber("-1"), -1);
  EXPECT_EQ(parseNcclNumber("010"), 10);  // decimal, not strtol's octal
  EXPECT_FALSE(parseNcclNumber("").has_value());
  EXPECT_FALSE(parseNcclNumber("0x").has_value());
  EXPECT_FALSE(parseNcclNumber("16 lanes").has_value());
  EXPECT_FALSE(parseNcclNumber("zero").has_value());
  EXPECT_FALSE(parseNcclNumber("99999999999999999999").has_value());
}

// Empty link_speed, sysfs's "Unknown", link_width="0" (NCCL: x16), empty
// numbers, hex or decimal ids, negative "unknown" values, unknown attributes.
TEST(NcclXmlValues, OddAttributesLoad) {
  std::string body =
      "    <pci busid=\"0000:01:00.0\" class=\"0x030200\" vendor=\"4318\" link_speed=\"32.0 GT/s PCIe\" "
      "link_width=\"0\">\n      <gpu dev=\"-1\" sm=\"0x5a\" rank=\"\" gdr=\"1\" mlopart=\"0\"/>\n    </pci>\n"
      "    <pci busid=\"0000:02:00.0\" class=\"0x020000\" link_speed=\"\" link_width=\"\" acs=\"on\">\n"
      "      <nic>\n        <net name=\"eth0\" dev=\"0\" speed=\"-1\" port=\"0\" latency=\"0.000000\" guid=\"0x0\" "
      "maxconn=\"65536\" gdr=\"0\" net=\"1\"/>\n      </nic>\n    </pci>\n"
      "    <pci busid=\"0000:03:00.0\" class=\"0x020700\" link_speed=\"Unknown\" link_width=\"16\"/>\n";
  auto t = loadText("odd.xml", oneCpu(body));
  ASSERT_EQ(t->gpus().size(), 1u);
  ASSERT_EQ(t->nics().size(), 2u);
  const Node& g = t->nodes[t->gpus()[0]];
  EXPECT_EQ(g.pci.vendor, 0x10de);
  EXPECT_EQ(g.sm, 90);
  EXPECT_EQ(g.gpuDev, -1);
  EXPECT_EQ(g.gpuRank, -1);
  EXPECT_EQ(g.pci.linkWidth, 0);
  // Width 0 counts as x16, as in NCCL: Gen5 x16 = 48 GB/s to the CPU.
  EXPECT_DOUBLE_EQ(path(*t, g.id, t->cpuNodes()[0]).bandwidthGBs, 48.0);
  const Node& eth = t->nodes[t->findBusId("0000:02:00.0")];
  EXPECT_FALSE(eth.rdma);  // gdr="0" and guid="0x0" are what NCCL writes for socket ports too
  ASSERT_EQ(eth.nets.size(), 1u);
  EXPECT_EQ(eth.nets[0].speedMbps, -1);
  EXPECT_EQ(eth.extra, (Attributes{{"acs", "on"}}));
  EXPECT_TRUE(t->nodes[t->findBusId("0000:03:00.0")].rdma);  // class 0x0207: InfiniBand
  EXPECT_TRUE(t->warnings.empty());
  // Unknown attributes survive a dump.
  std::string dump = ncclXml(*t);
  EXPECT_NE(dump.find("mlopart=\"0\""), std::string::npos) << dump;
  EXPECT_NE(dump.find("net=\"1\""), std::string::npos) << dump;
  EXPECT_NE(dump.find("link_speed=\"Unknown\""), std::string::npos) << dump;
}

// <nic> straight under <cpu> (NCCL's place for a NIC it cannot find in the
// PCI tree, e.g. a socket interface of a container), listed under each <cpu>.
TEST(NcclXmlValues, NicWithoutPciParent) {
  std::string text = "<system version=\"1\">\n"
                     "  <cpu numaid=\"0\" affinity=\"00000003\">\n    <nic>\n"
                     "      <net name=\"eth0\" dev=\"0\" speed=\"10000\" port=\"0\" guid=\"0x0\" gdr=\"0\"/>\n"
                     "    </nic>\n  </cpu>\n  <cpu numaid=\"1\" affinity=\"0000000c\">\n    <nic>\n"
                     "      <net name=\"eth0\" dev=\"0\" speed=\"10000\" port=\"0\" guid=\"0x0\" gdr=\"0\"/>\n"
                     "    </nic>\n  </cpu>\n</system>\n";
  auto t = loadText("nicnopci.xml", text);
  ASSERT_EQ(t->nics().size(), 2u);
  for (int n : t->nics()) {
    EXPECT_EQ(t->nodes[n].name, "eth0");
    EXPECT_FALSE(t->nodes[n].rdma);
    EXPECT_TRUE(t->nodes[n].pci.busId.empty());
  }
  EXPECT_EQ(path(*t, t->nics()[0], t->cpuNodes()[0]).cls, PathClass::kPhb);
  EXPECT_EQ(path(*t, t->nics()[0], t->nics()[1]).cls, PathClass::kSys);
  std::string dump = ncclXml(*t);
  EXPECT_EQ(ncclXml(*loadText("nicnopci2.xml", dump)), dump);
}

// numaid="-1": sysfs knew no NUMA node; the <cpu> takes the lowest free id.
TEST(NcclXmlValues, UnknownNumaIdTakesAFreeOne) {
  std::string text = "<system version=\"1\">\n  <cpu numaid=\"0\" affinity=\"00000001\"/>\n"
                     "  <cpu numaid=\"-1\" affinity=\"00000002\"/>\n</system>\n";
  auto t = loadText("numa.xml", text);
  ASSERT_EQ(t->cpuNodes().size(), 2u);
  EXPECT_EQ(t->nodes[t->cpuNodes()[1]].numa, 1);
  EXPECT_EQ(t->nodes[t->cpuNodes()[1]].cpus, std::vector<int>{1});
}

// <pcilink> and <c2c> are NCCL's; Loom keeps them for the dump. Elements
// nobody knows are skipped with one warning per name, as NCCL skips them.
TEST(NcclXmlValues, OtherElementsAreKeptOrSkipped) {
  std::string body = "    <pci busid=\"0000:01:00.0\" class=\"0x060400\">\n"
                     "      <pcilink target=\"0000:41:00.0\"/>\n" +
                     std::string("      <pci busid=\"0000:02:00.0\" class=\"0x030200\">\n"
                                 "        <gpu dev=\"0\" sm=\"100\" rank=\"0\" gdr=\"1\">\n"
                                 "          <c2c bw=\"40000\" count=\"10\"/>\n"
                                 "          <future kind=\"a\"/>\n        </gpu>\n      </pci>\n") +
                     "      <gpux dev=\"0\"><deep/></gpux>\n      <gpux dev=\"1\"/>\n    </pci>\n";
  auto t = loadText("other.xml", oneCpu(body));
  EXPECT_EQ(t->gpus().size(), 1u);
  ASSERT_EQ(t->warnings.size(), 2u);
  EXPECT_EQ(t->warnings[0], tempPrefix() + "other.xml:8: unknown element <future> inside <gpu> skipped with what it holds "
                                    "(expected <nvlink>)");
  EXPECT_EQ(t->warnings[1], tempPrefix() + "other.xml:11: unknown element <gpux> inside <pci> skipped with what it holds "
                                    "(expected <pci>, <gpu> or <nic>)");
  std::string dump = ncclXml(*t);
  EXPECT_NE(dump.find("<pcilink target=\"0000:41:00.0\"/>"), std::string::npos) << dump;
  EXPECT_NE(dump.find("<c2c bw=\"40000\" count=\"10\"/>"), std::string::npos) << dump;
  EXPECT_EQ(dump.find("future"), std::string::npos) << dump;
  EXPECT_EQ(ncclXml(*loadText("other2.xml", dump)), dump);
}

// --- still refused -------------------------------------------------------

TEST(NcclXmlRefused, WhatCannotDescribeAMachine) {
  EXPECT_NE(errorOf("nobus.xml", oneCpu("    <pci class=\"0x030200\">\n      <gpu dev=\"0\"/>\n    </pci>\n"))
                .find("nobus.xml:3: <pci> has no busid attribute"),
            std::string::npos);
  EXPECT_NE(errorOf("gpucpu.xml", oneCpu("    <gpu dev=\"0\" sm=\"90\"/>\n"))
                .find("gpucpu.xml:3: <gpu> cannot appear inside <cpu>"),
            std::string::npos);
  EXPECT_NE(errorOf("notnum.xml", oneCpu("    <pci busid=\"0000:01:00.0\" link_width=\"wide\"/>\n"))
                .find("notnum.xml:3: <pci> has link_width=\"wide\" which is not a number"),
            std::string::npos);
  EXPECT_NE(errorOf("nonuma.xml", "<system version=\"1\">\n  <cpu affinity=\"1\"/>\n</system>\n")
                .find("nonuma.xml:2: <cpu> has no numaid attribute"),
            std::string::npos);
  // libxml2 names the line where it noticed (the end of the text, here 4).
  std::string msg = errorOf("unclosed.xml", "<system version=\"1\">\n  <cpu numaid=\"0\">\n</system>\n");
  EXPECT_NE(msg.find("unclosed.xml:4: not well-formed XML"), std::string::npos) << msg;
}

TEST(NcclXmlValues, BusIds) {
  EXPECT_EQ(normalizeBusId("00000000:C0:00.0").value_or(""), "0000:c0:00.0");
  EXPECT_EQ(normalizeBusId("c0:00.0").value_or(""), "0000:c0:00.0");
  EXPECT_EQ(normalizeBusId("1:02:03.1").value_or(""), "0001:02:03.1");
  EXPECT_EQ(normalizeBusId("10000:02:03.1").value_or(""), "10000:02:03.1");  // domains above 0xffff exist (VMD)
  EXPECT_FALSE(normalizeBusId("fffffff:ff:ff.0").has_value());  // device 0xff: NCCL's placeholder
  EXPECT_FALSE(normalizeBusId("fffffff:ffff:ff").has_value());
  EXPECT_FALSE(normalizeBusId("123456789:00:00.0").has_value());
  EXPECT_FALSE(normalizeBusId("").has_value());
}

}  // namespace
}  // namespace loom::topo

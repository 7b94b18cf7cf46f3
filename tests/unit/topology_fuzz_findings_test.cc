// Regressions for what the fuzzers found in the topology readers
// (docs/RELIABILITY.md, "Findings and fixes"; the inputs themselves are
// replayed from tests/fuzz/regressions/). Each case failed, or crashed the
// binary, before its fix.
#include <gtest/gtest.h>
#include <libxml/xmlerror.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "base/error.h"
#include "loom_topo/report.h"
#include "support/topology_text.h"
#include "topology/hwloc_import.h"
#include "topology/nccl_xml.h"
#include "topology/topology_file.h"
#include "topology/xml_doc.h"

namespace loom::topo {
namespace {

std::string fixture(const std::string& name) { return std::string(LOOM_TEST_DATA_DIR) + "/topologies/" + name; }

// A one-package, one-NUMA-node, two-PU machine in hwloc 2.x XML; `package`
// and `numa` are the attributes of those two objects after their type.
std::string hwlocMachine(const std::string& package, const std::string& numa = "os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\"") {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<!DOCTYPE topology SYSTEM \"hwloc2.dtd\">\n"
         "<topology version=\"2.0\">\n"
         "  <object type=\"Machine\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" "
         "allowed_cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\" allowed_nodeset=\"0x00000001\">\n"
         "    <object type=\"Package\" " + package + ">\n"                                     // line 5
         "      <object type=\"NUMANode\" " + numa + " local_memory=\"1073741824\"/>\n"         // line 6
         "      <object type=\"Core\" os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\">\n"
         "        <object type=\"PU\" os_index=\"0\" cpuset=\"0x00000001\" complete_cpuset=\"0x00000001\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\"/>\n"
         "        <object type=\"PU\" os_index=\"1\" cpuset=\"0x00000002\" complete_cpuset=\"0x00000002\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\"/>\n"
         "      </object>\n"
         "    </object>\n"
         "  </object>\n"
         "</topology>\n";
}

const char* kGoodPackage =
    "os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\"";

TEST(TopologyFuzzFindings, HwlocMachineOfTheseTestsImports) {
  auto t = loadText("fuzz_good.xml", hwlocMachine(kGoodPackage));
  ASSERT_EQ(t->cpuNodes().size(), 1u);
  EXPECT_EQ(t->pus.size(), 2u);
}

// Finding 4: hwloc 2.9.0 segfaults (open-mpi/hwloc#783) on an object with a
// cpuset but no complete_cpuset; Loom refuses the file before hwloc sees it.
TEST(TopologyFuzzFindings, HwlocObjectWithCpusetButNoCompleteCpusetIsRefusedWithItsLine) {
  std::string e = errorOf("fuzz_783.xml", hwlocMachine("os_index=\"0\" cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\""));
  EXPECT_NE(e.find(".xml:5: <object type=\"Package\"> has cpuset but no complete_cpuset"), std::string::npos) << e;
  EXPECT_NE(e.find("#783"), std::string::npos) << e;
}

TEST(TopologyFuzzFindings, HwlocObjectWithCompleteNodesetButNoNodesetIsRefusedWithItsLine) {
  std::string e = errorOf("fuzz_783n.xml", hwlocMachine("os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" complete_nodeset=\"0x00000001\""));
  EXPECT_NE(e.find(".xml:5: <object type=\"Package\"> has complete_nodeset but no nodeset"), std::string::npos) << e;
}

// Found by CI's fuzzer: hwloc 2.9.0 segfaults (in hwloc_bitmap_isequal) on
// a 1.x file whose NUMA node has no cpusets, or whose root has no nodesets;
// upstream hwloc now refuses any object without all four sets, as Loom does
// (tests/fuzz/regressions/hwloc_xml/hwloc1-*.xml replay the crashing files).
TEST(TopologyFuzzFindings, HwlocObjectWithoutASetPairIsRefusedWithItsLine) {
  std::string e = errorOf("fuzz_no_cpusets.xml", hwlocMachine("os_index=\"0\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\""));
  EXPECT_NE(e.find(".xml:5: <object type=\"Package\"> has neither cpuset nor complete_cpuset"), std::string::npos) << e;
  e = errorOf("fuzz_no_nodesets.xml", hwlocMachine(kGoodPackage, "os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\""));
  EXPECT_NE(e.find(".xml:6: <object type=\"NUMANode\"> has neither nodeset nor complete_nodeset"), std::string::npos) << e;
  for (const char* file : {"hwloc1-numa-node-without-cpusets.xml", "hwloc1-machine-without-nodesets.xml"}) {
    std::string path = std::string(LOOM_TEST_DATA_DIR) + "/../fuzz/regressions/hwloc_xml/" + file;
    try {
      readTopologyFile(path, nullptr);
      ADD_FAILURE() << file << " accepted";
    } catch (const Error& err) {
      EXPECT_NE(std::string(err.what()).find("has neither "), std::string::npos) << err.what();
    }
  }
}

// Found by the fuzzer: a PU whose cpuset is not the bit of its os_index
// (hwloc 2.9.0 keeps both as written) made Loom number a CPU outside every
// NUMA node, and the NCCL XML dump then did not read back to the same text.
TEST(TopologyFuzzFindings, HwlocPuOrNumaNodeWhoseSetIsNotItsOwnIndexIsRefusedWithItsLine) {
  std::string machine = hwlocMachine(kGoodPackage);
  std::string pu = machine;
  pu.replace(pu.find("os_index=\"1\" cpuset=\"0x00000002\""), 32, "os_index=\"9\" cpuset=\"0x00000002\"");
  std::string e = errorOf("fuzz_pu_bit.xml", pu);
  EXPECT_NE(e.find(".xml:9: <object type=\"PU\" os_index=\"9\"> has cpuset=\"0x00000002\", which is not that one index"),
            std::string::npos) << e;
  e = errorOf("fuzz_numa_bit.xml", hwlocMachine(kGoodPackage, "os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" nodeset=\"0x00000003\" complete_nodeset=\"0x00000003\""));
  EXPECT_NE(e.find(".xml:6: <object type=\"NUMANode\" os_index=\"0\"> has nodeset=\"0x00000003\""), std::string::npos) << e;
  std::string untyped = machine;
  untyped.replace(untyped.find("<object type=\"Core\""), 19, "<object");
  e = errorOf("fuzz_untyped.xml", untyped);
  EXPECT_NE(e.find(".xml:7: <object> has no type attribute"), std::string::npos) << e;
  // PUs past 32 (bits in a later word, "0x00000001,0x0") pass: the 72-CPU
  // fixtures other tests load are written that way.
}

// hwloc 2.9.0 reads a malformed bitmap as a partial set, ends with an empty
// topology and dereferences NULL (tests/fuzz/regressions/hwloc_xml/
// topology-became-empty.xml, found by the fuzzer).
TEST(TopologyFuzzFindings, HwlocMalformedBitmapIsRefusedWithItsLine) {
  std::string e = errorOf("fuzz_bitmap.xml", hwlocMachine("os_index=\"0\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003$\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\""));
  EXPECT_NE(e.find(".xml:5: <object type=\"Package\"> has complete_cpuset=\"0x00000003$\", which is not an hwloc bitmap"),
            std::string::npos) << e;
  for (const char* bad : {"", "0x", ",", "0xg", "0xf...f,", "1 2", "0x1;0x2"}) {
    std::string text = hwlocMachine(std::string("os_index=\"0\" cpuset=\"") + bad +
                                    "\" complete_cpuset=\"0x3\" nodeset=\"0x1\" complete_nodeset=\"0x1\"");
    EXPECT_NE(errorOf("fuzz_bitmap2.xml", text).find("is not an hwloc bitmap"), std::string::npos) << bad;
  }
}

TEST(TopologyFuzzFindings, HwlocBitmapsAsHwlocWritesThemLoad) {
  // Several words, an empty (zero) word, an infinite prefix, no 0x: what lstopo writes on big machines.
  for (const char* good : {"0x00000003", "0x00000000,,0x00000003", "0xf...f,0x00000003", "3"}) {
    std::string text = hwlocMachine(std::string("os_index=\"0\" cpuset=\"0x3\" complete_cpuset=\"") + good +
                                    "\" nodeset=\"0x1\" complete_nodeset=\"0x1\"");
    EXPECT_NO_THROW(loadText("fuzz_bitmap_ok.xml", text)) << good;
  }
}

TEST(TopologyFuzzFindings, HwlocIoObjectAsRootIsRefusedWithItsLine) {
  std::string text =
      "<topology version=\"2.0\">\n"
      "  <object type=\"Bridge\" bridge_type=\"0-1\" depth=\"0\" bridge_pci=\"0000:[00-01]\"/>\n"
      "</topology>\n";
  std::string e = errorOf("fuzz_800.xml", text);
  EXPECT_NE(e.find(".xml:2: <object type=\"Bridge\"> cannot be the topology's root object"), std::string::npos) << e;
}

TEST(TopologyFuzzFindings, ImportHwlocXmlChecksTooNotOnlyReadTopologyFile) {
  std::string path = writeTemp("fuzz_783_direct.xml", hwlocMachine("os_index=\"0\" cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\""));
  try {
    importHwlocXml(path);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomInvalidArgument);
    EXPECT_EQ(std::string(e.what()).rfind(path + ":5: ", 0), 0u) << e.what();
  }
}

// Finding 6: a <cpu> without affinity took all of its detected NUMA node's
// CPUs, even those another <cpu> of the file lists; the dump then failed to
// load ("affinity includes CPU 1, which the <cpu> on line 2 already has").
TEST(TopologyFuzzFindings, FillInGivesACpuOnlyCpusNoOtherCpuLists) {
  auto detected = loadText("fuzz_detected.xml",
                           "<system version=\"1\">\n"
                           "  <cpu numaid=\"0\" affinity=\"00000003\" package=\"0\"/>\n"
                           "  <cpu numaid=\"1\" affinity=\"0000000c\" package=\"1\"/>\n"
                           "</system>\n");
  std::string path = writeTemp("fuzz_fill.xml",
                               "<system version=\"1\">\n"
                               "  <cpu numaid=\"0\"/>\n"
                               "  <cpu numaid=\"1\" affinity=\"00000006\"/>\n"
                               "</system>\n");
  auto t = readTopologyFile(path, detected.get());
  std::set<int> numa0, numa1;
  for (int c : t->cpuNodes()) {
    (t->nodes[c].numa == 0 ? numa0 : numa1).insert(t->nodes[c].cpus.begin(), t->nodes[c].cpus.end());
  }
  EXPECT_EQ(numa0, (std::set<int>{0}));
  EXPECT_EQ(numa1, (std::set<int>{1, 2}));
  std::string dump = ncclXml(*t);
  auto back = loadText("fuzz_fill_dump.xml", dump);
  EXPECT_EQ(ncclXml(*back), dump);
}

// Found by the fuzzer (nccl_xml, filled from a detected machine): a <pci>
// without a class that holds other <pci> devices is a switch in the file;
// where the machine has a NIC at that address, filling in the NIC's class
// made a NIC that holds PCI devices, and the dump did not read back. A
// device the file made into another kind now takes nothing from the
// machine, and the dump round-trips.
TEST(TopologyFuzzFindings, FillInLeavesAFileSwitchAloneWhereTheMachineHasANic) {
  auto detected = loadText("fuzz_detected_nic.xml",
                           "<system version=\"1\">\n"
                           "  <cpu numaid=\"0\" affinity=\"00000003\" package=\"0\">\n"
                           "    <pci busid=\"0000:08:00.0\" class=\"0x020700\" vendor=\"0x15b3\" device=\"0x1017\">\n"
                           "      <nic><net name=\"mlx5_0\" dev=\"0\"/></nic>\n"
                           "    </pci>\n"
                           "  </cpu>\n"
                           "</system>\n");
  std::string path = writeTemp("fuzz_file_switch.xml",
                               "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"08:00.0\"><pci busid=\"00:00.0\"/>"
                               "</pci></cpu></system>\n");
  auto t = readTopologyFile(path, detected.get());
  const int sw = t->findBusId("0000:08:00.0");
  ASSERT_GE(sw, 0);
  EXPECT_EQ(t->nodes[sw].kind, NodeKind::kPciSwitch);
  EXPECT_EQ(t->nodes[sw].pci.classCode, -1);
  EXPECT_EQ(t->nodes[sw].pci.vendor, -1);
  std::string dump = ncclXml(*t);
  auto back = loadText("fuzz_file_switch_dump.xml", dump);
  EXPECT_EQ(ncclXml(*back), dump);

  // A plain device of the file still becomes what the machine has there
  // when its class fits: a NIC whose ports are all net="0" (not a NIC in
  // the file) is a NIC again; one of another class stays as the file says.
  path = writeTemp("fuzz_file_plain.xml",
                   "<system version=\"1\"><cpu numaid=\"0\">"
                   "<pci busid=\"0000:08:00.0\" class=\"0x020700\"><nic><net name=\"gin0\" dev=\"0\" net=\"0\"/></nic></pci>"
                   "</cpu></system>\n");
  t = readTopologyFile(path, detected.get());
  EXPECT_EQ(t->nodes[t->findBusId("0000:08:00.0")].kind, NodeKind::kNic);
  path = writeTemp("fuzz_file_nvme.xml",
                   "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"0000:08:00.0\" class=\"0x010802\"/>"
                   "</cpu></system>\n");
  t = readTopologyFile(path, detected.get());
  const Node& nvme = t->nodes[t->findBusId("0000:08:00.0")];
  EXPECT_EQ(nvme.kind, NodeKind::kPciDevice);
  EXPECT_EQ(nvme.pci.vendor, -1);
  dump = ncclXml(*t);
  EXPECT_EQ(ncclXml(*loadText("fuzz_file_nvme_dump.xml", dump)), dump);
}

// Found by the fuzzer (nccl_xml): an <nvlink> to the CPU (tclass 0x068001)
// whose target address another <nvlink> of the GPU makes a switch was kept
// for the dump on the first read, then taken for that switch on reading
// the dump, and lost. The class decides, whatever sits at the address.
TEST(TopologyFuzzFindings, CpuNvlinkSurvivesASwitchLinkToTheSameAddress) {
  auto t = loadText("fuzz_cpu_nvlink.xml",
                    "<system version=\"1\"><cpu numaid=\"0\"><pci busid=\"00:00.0\"><gpu>"
                    "<nvlink target=\"c5:00.0\" tclass=\"0x68001\"/><nvlink target=\"c5:00.0\"/>"
                    "</gpu></pci></cpu></system>\n");
  std::string dump = ncclXml(*t);
  EXPECT_NE(dump.find("tclass=\"0x68001\""), std::string::npos) << dump;
  EXPECT_EQ(ncclXml(*loadText("fuzz_cpu_nvlink_dump.xml", dump)), dump);
}

// Finding 8 (RELIABILITY.md numbering): hwloc's libxml2 plugin leaves
// libxml2's process-wide error handler pointing into itself when hwloc
// unloads it; the next malformed file then crashed instead of failing.
TEST(TopologyFuzzFindings, MalformedFileAfterAnHwlocImportFailsWithFileAndLine) {
  ASSERT_FALSE(importHwlocXml(fixture("llnl-pascal-2xP100-pcie-switch-mlx5.hwloc.xml"))->gpus().empty());
  // A first line libxml2 cannot even guess an encoding for: that error goes
  // to the process-wide handler, not the parser's.
  std::string e = errorOf("fuzz_broken.xml",
                          "<                                    system version=\"1\">\n"
                          "  <cpu numaid=\"0\" affinity=\"00000001\"/>\n"
                          "</system>\n");
  EXPECT_NE(e.find(".xml:1: not well-formed XML"), std::string::npos) << e;
}

int processWideCalls = 0;
void countGeneric(void*, const char*, ...) { processWideCalls++; }
#if LIBXML_VERSION >= 21200
void countStructured(void*, const xmlError*) { processWideCalls++; }
#else
void countStructured(void*, xmlError*) { processWideCalls++; }
#endif

TEST(TopologyFuzzFindings, XmlDocNeverCallsProcessWideLibxml2Handlers) {
  processWideCalls = 0;
  xmlSetGenericErrorFunc(nullptr, countGeneric);
  std::string e = errorOf("fuzz_broken_generic.xml", "<system version=\"1\">\n  <cpu numaid=\"0\"\n</system>\n");
  xmlSetStructuredErrorFunc(nullptr, countStructured);
  std::string e2 = errorOf("fuzz_broken_structured.xml", "<system version=\"1\">\n  <cpu numaid=\"0\"\n</system>\n");
  xmlSetStructuredErrorFunc(nullptr, nullptr);
  xmlSetGenericErrorFunc(nullptr, nullptr);
  EXPECT_EQ(processWideCalls, 0);
  EXPECT_NE(e.find("not well-formed XML"), std::string::npos) << e;
  EXPECT_NE(e2.find("not well-formed XML"), std::string::npos) << e2;
}

// Finding 9: printTree counted cores as package * 1000000 + core in an int
// (signed overflow, UB, from package 2148). In a build without UBSan the
// key wrapped: 54369991 * 1000000 + 64 wraps to 0, the key of package 0's
// core 0, so two cores were counted as one.
TEST(TopologyFuzzFindings, TreeCountsCoresOfHugePackageNumbers) {
  auto t = loadText("fuzz_package.xml",
                    "<system version=\"1\">\n"
                    "  <cpu numaid=\"0\" affinity=\"00000001,00000000,00000000\" package=\"54369991\"/>\n"
                    "  <cpu numaid=\"1\" affinity=\"00000000,00000000,00000001\" package=\"0\"/>\n"
                    "  <cpu numaid=\"2\" affinity=\"00000000,00000000,00000002\" package=\"7296\"/>\n"
                    "</system>\n");
  std::ostringstream os;
  printTree(os, *t);
  EXPECT_NE(os.str().find("3 sockets, 3 NUMA nodes, 3 cores, 3 PUs"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("Package 54369991"), std::string::npos) << os.str();
}

// Finding 10: an hwloc NUMA node without a usable os_index dumped as a <cpu>
// without numaid, which the NCCL reader refuses.
TEST(TopologyFuzzFindings, HwlocNumaNodeWithoutOsIndexGetsANumaidAndRoundTrips) {
  auto t = loadText("fuzz_numa.xml", hwlocMachine(kGoodPackage, "cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" nodeset=\"0x00000001\" complete_nodeset=\"0x00000001\""));
  ASSERT_EQ(t->cpuNodes().size(), 1u);
  EXPECT_EQ(t->nodes[t->cpuNodes()[0]].numa, 0);
  std::string dump = ncclXml(*t);
  EXPECT_NE(dump.find("numaid=\"0\""), std::string::npos) << dump;
  auto back = loadText("fuzz_numa_dump.xml", dump);
  EXPECT_EQ(ncclXml(*back), dump);
}


// Finding 11: hwloc gives a memory-only NUMA node (KNL's MCDRAM, HBM, CXL)
// its package's cpuset, so both of the package's NUMA nodes dumped the same
// affinity and Loom's NCCL reader refused its own dump. Each CPU now belongs
// to the first NUMA node holding it; the memory node has none, as in Linux.
TEST(TopologyFuzzFindings, MemoryOnlyNumaNodeHasNoCpusAndTheDumpRoundTrips) {
  auto t = readTopologyFile(fixture("knl-flat-mcdram-synthetic.hwloc.xml"), nullptr);
  std::vector<int> cpus = t->cpuNodes();
  ASSERT_EQ(cpus.size(), 2u);
  const Node& dram = t->nodes[cpus[0]];
  const Node& mcdram = t->nodes[cpus[1]];
  EXPECT_EQ(dram.numa, 0);
  EXPECT_EQ(dram.cpus, std::vector<int>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(dram.memoryBytes, 103079215104u);
  EXPECT_EQ(mcdram.numa, 1);
  EXPECT_TRUE(mcdram.cpus.empty());
  EXPECT_EQ(mcdram.memoryBytes, 17179869184u);
  ASSERT_EQ(t->pus.size(), 16u);
  for (const Pu& pu : t->pus) EXPECT_EQ(pu.numa, 0) << "CPU " << pu.os;

  std::ostringstream tree;
  printTree(tree, *t);
  EXPECT_NE(tree.str().find("NUMA 0: CPUs 0-15, 96.0 GiB"), std::string::npos) << tree.str();
  EXPECT_NE(tree.str().find("NUMA 1: CPUs none (memory only), 16.0 GiB"), std::string::npos) << tree.str();

  std::string dump = ncclXml(*t);
  EXPECT_NE(dump.find("<cpu numaid=\"0\" affinity=\"0000ffff\" package=\"0\" memory=\"103079215104\"/>"), std::string::npos) << dump;
  EXPECT_NE(dump.find("<cpu numaid=\"1\" package=\"0\" memory=\"17179869184\"/>"), std::string::npos) << dump;
  auto back = loadText("fuzz_memory_only_dump.xml", dump);
  EXPECT_EQ(ncclXml(*back), dump);
}

// The fuzzer's input behind finding 11 (two packages whose cpusets overlap):
// the first NUMA node keeps the shared CPUs, and the dump reads back.
TEST(TopologyFuzzFindings, OverlappingNumaCpusetsGoToTheFirstNodeAndTheDumpRoundTrips) {
  auto t = readTopologyFile(std::string(LOOM_TEST_DATA_DIR) + "/../fuzz/regressions/hwloc_xml/numa-cpusets-overlap.xml", nullptr);
  std::set<int> seen;
  for (int c : t->cpuNodes()) {
    for (int cpu : t->nodes[c].cpus) EXPECT_TRUE(seen.insert(cpu).second) << "CPU " << cpu << " in two NUMA nodes";
  }
  // Package 0's cpuset 0xfff0030f,0x0003ffff (36 CPUs) and package 1's
  // 0x000000ff,0xffc0000f,0xfffc0000 (36) share 0xffc0000f in word 1 (14).
  EXPECT_EQ(seen.size(), 36u + 36u - 14u);
  std::string dump = ncclXml(*t);
  auto back = loadText("fuzz_overlap_dump.xml", dump);
  EXPECT_EQ(ncclXml(*back), dump);
}


// Finding 12: hwloc stores bridge_type, cache_type and osdev_type numbers in
// its enums unchecked; bridge_type="2-1" made Loom load an invalid enum
// value (UBSan). Refused before hwloc, naming the line.
TEST(TopologyFuzzFindings, HwlocEnumAttributesOutsideTheirRangeAreRefusedWithTheirLine) {
  std::string cacheMachine = hwlocMachine(kGoodPackage);
  std::string marker = "      <object type=\"Core\"";
  std::string badCache = cacheMachine;
  badCache.insert(badCache.find(marker),
                  "      <object type=\"L2Cache\" cpuset=\"0x00000003\" complete_cpuset=\"0x00000003\" nodeset=\"0x00000001\" "
                  "complete_nodeset=\"0x00000001\" cache_size=\"1048576\" depth=\"2\" cache_linesize=\"64\" "
                  "cache_associativity=\"16\" cache_type=\"3\"/>\n");
  std::string e = errorOf("fuzz_cache_type.xml", badCache);
  EXPECT_NE(e.find(".xml:7: <object type=\"L2Cache\"> has cache_type=\"3\"; hwloc defines 0 (unified), 1 (data) or 2 (instruction)"),
            std::string::npos) << e;

  for (const char* bridgeType : {"2-1", "1", "1-x", "-1-1"}) {
    std::string badBridge = cacheMachine;
    badBridge.insert(badBridge.find("    </object>\n  </object>\n</topology>"),
                     std::string("      <object type=\"Bridge\" bridge_type=\"") + bridgeType +
                         "\" depth=\"0\" bridge_pci=\"0000:[00-01]\"/>\n");
    e = errorOf("fuzz_bridge_type.xml", badBridge);
    EXPECT_NE(e.find(std::string(".xml:11: <object type=\"Bridge\"> has bridge_type=\"") + bridgeType +
                         "\"; hwloc writes upstream-downstream, each 0 (host) or 1 (PCI)"),
              std::string::npos) << e;
  }
}


std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void replaceOnce(std::string& text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
}

// Finding 13: hwloc reads a pci_type it cannot parse as zeros, silently;
// the fuzzer's file turned a PCI switch into class 0x000000, and the dump
// then had a non-bridge <pci> holding others, which the NCCL reader refuses.
TEST(TopologyFuzzFindings, HwlocPciAttributesThatDoNotParseAreRefusedWithTheirLine) {
  const std::string path = std::string(LOOM_TEST_DATA_DIR) + "/../fuzz/regressions/hwloc_xml/bridge-with-non-bridge-class.xml";
  std::string e = errorOf("fuzz_pci_type.xml", readText(path));
  EXPECT_NE(e.find(".xml:26: <object type=\"Bridge\"> has pci_type=\"0604 [10b5:8796} [10b5:8796] ab\", which is not "
                   "hwloc's format (such as 0302 [10de:2330] [10de:16c1] a1)"),
            std::string::npos) << e;
  std::string text = readText(path);
  replaceOnce(text, "[10b5:8796}", "[10b5:8796]");
  replaceOnce(text, "pci_busid=\"0000:03:04.0\"", "pci_busid=\"0000:03:4.0.1\"");
  e = errorOf("fuzz_pci_busid.xml", text);
  EXPECT_NE(e.find(".xml:28: <object type=\"Bridge\"> has pci_busid=\"0000:03:4.0.1\", which is not hwloc's format"),
            std::string::npos) << e;
}

// A Bridge object is a bridge whatever class its pci_type gives: the dump
// writes it as a PCI-to-PCI bridge, so the dump reads back.
TEST(TopologyFuzzFindings, HwlocBridgeWithAnotherClassDumpsAsABridgeAndRoundTrips) {
  std::string text = readText(std::string(LOOM_TEST_DATA_DIR) + "/../fuzz/regressions/hwloc_xml/bridge-with-non-bridge-class.xml");
  replaceOnce(text, "pci_type=\"0604 [10b5:8796} [10b5:8796] ab\"", "pci_type=\"0000 [10b5:8796] [10b5:8796] ab\"");
  auto t = loadText("fuzz_bridge_class.xml", text);
  std::string dump = ncclXml(*t);
  EXPECT_NE(dump.find("busid=\"0000:02:00.0\" class=\"0x060400\""), std::string::npos) << dump;
  auto back = loadText("fuzz_bridge_class_dump.xml", dump);
  EXPECT_EQ(ncclXml(*back), dump);
}


// Finding 14: hwloc accepts two objects with one pci_busid (the fuzzer
// repeated a subtree); the dump then had the device twice and the NCCL
// reader refused it. Refused before hwloc, naming both lines.
TEST(TopologyFuzzFindings, HwlocPciBusIdTwiceIsRefusedWithBothLines) {
  std::string e = errorOf("fuzz_busid_twice.xml",
                          readText(std::string(LOOM_TEST_DATA_DIR) + "/../fuzz/regressions/hwloc_xml/pci-busid-twice.xml"));
  EXPECT_NE(e.find(".xml:95: <object type=\"PCIDev\"> has pci_busid=\"0000:0b:00.0\", which the object on line 76 "
                   "already has (one device per PCI address)"),
            std::string::npos) << e;
}

}  // namespace
}  // namespace loom::topo

// Regressions for what the fuzzers found in the topology readers
// (docs/RELIABILITY.md, "Findings and fixes"; the inputs themselves are
// replayed from tests/fuzz/regressions/). Each case failed, or crashed the
// binary, before its fix.
#include <gtest/gtest.h>
#include <libxml/xmlerror.h>

#include <set>
#include <sstream>
#include <string>

#include "core/error.h"
#include "support/topology_text.h"
#include "topology/hwloc_import.h"
#include "topology/nccl_xml.h"
#include "topology/report.h"
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

}  // namespace
}  // namespace loom::topo

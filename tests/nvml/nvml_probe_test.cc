// NVML through Loom's dlopen path, against tests/nvml/nvml_stub.c (ctest puts
// it first on LD_LIBRARY_PATH): what no GPU-less machine can otherwise run.
// The stub's two GPUs and 4 NVLinks sit on the LLNL Pascal fixture's bus ids,
// whose file has no NVLink, so adding NVML's links must turn the GPU pair
// from PIX into NVL.
#include <gtest/gtest.h>

#include "topology/hwloc_import.h"
#include "topology/nvml_probe.h"
#include "topology/paths.h"
#include "topology/topology_file.h"

namespace loom::topo {
namespace {

TEST(NvmlProbe, ReadsVersionsAndCountsLanesPerPeer) {
  NvmlInfo info = probeNvml();
  ASSERT_TRUE(info.loaded) << "the stub libnvidia-ml.so.1 was not found: is LD_LIBRARY_PATH set by ctest?";
  EXPECT_EQ(info.driverVersion, "999.1.2-stub");
  EXPECT_EQ(info.nvmlVersion, "12.999.1.2-stub");
  EXPECT_EQ(info.cudaDriverVersion, 12040);
  ASSERT_EQ(info.peers.size(), 2u);
  EXPECT_EQ(info.peers[0].gpuBusId, "0000:04:00.0");
  EXPECT_EQ(info.peers[0].remoteBusId, "0000:07:00.0");
  EXPECT_EQ(info.peers[0].lanes, 4);
  EXPECT_EQ(info.peers[1].gpuBusId, "0000:07:00.0");
  EXPECT_EQ(info.peers[1].remoteBusId, "0000:04:00.0");
}

TEST(NvmlProbe, NvlinksTurnThePascalGpuPairIntoNvl) {
  std::unique_ptr<Topology> t =
      readTopologyFile(std::string(LOOM_TEST_DATA_DIR) + "/topologies/llnl-pascal-2xP100-pcie-switch-mlx5.hwloc.xml",
                       nullptr);
  const int gpu0 = t->findBusId("0000:04:00.0"), gpu1 = t->findBusId("0000:07:00.0");
  ASSERT_GE(gpu0, 0);
  ASSERT_GE(gpu1, 0);
  EXPECT_EQ(path(*t, gpu0, gpu1).cls, PathClass::kPix) << "the file alone: both GPUs behind one PCIe switch";
  addNvmlLinks(*t, probeNvml());
  Path p = path(*t, gpu0, gpu1);
  EXPECT_EQ(p.cls, PathClass::kNvl);
  EXPECT_GT(p.bandwidthGBs, 12.0) << "4 NVLinks must beat the PCIe x16 path";
}

TEST(NvmlProbe, LinksToDevicesOutsideThePciTreeAreSkipped) {
  std::unique_ptr<Topology> t =
      readTopologyFile(std::string(LOOM_TEST_DATA_DIR) + "/topologies/llnl-pascal-2xP100-pcie-switch-mlx5.hwloc.xml",
                       nullptr);
  NvmlInfo stray;
  stray.peers.push_back(NvlinkPeer{"0000:04:00.0", "0000:99:00.0", 2});
  const size_t links = t->links.size();
  addNvmlLinks(*t, stray);
  EXPECT_EQ(t->links.size(), links);
}

}  // namespace
}  // namespace loom::topo

// The transport registry: which kind connects each pair of ranks, what
// LOOM_TRANSPORTS allows, and the sentences when nothing can connect a pair.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "topology/topology_file.h"
#include "transport/registry.h"

namespace loom {
namespace {

std::vector<RankIdentity> ranksOnHosts(const std::vector<std::string>& hosts) {
  std::vector<RankIdentity> identities;
  for (size_t r = 0; r < hosts.size(); ++r)
    identities.push_back({hosts[r] + "/boot-" + hosts[r], 1000 + static_cast<int>(r), {}, {}});
  return identities;
}

std::string errorOf(const std::vector<RankIdentity>& identities, int rank, const TransportFilter& filter) {
  try {
    chooseTransports(identities, rank, filter);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomUnsupported);
    return e.what();
  }
  return "";
}

TEST(TransportRegistry, SharedMemoryIsTheFirstKind) {
  ASSERT_FALSE(transportKinds().empty());
  EXPECT_STREQ(transportKinds()[0].name, "shm");
}

TEST(TransportRegistry, RanksOfOneHostConnectOverSharedMemory) {
  std::vector<RankIdentity> identities = ranksOnHosts({"a", "a", "a"});
  for (int rank = 0; rank < 3; ++rank) {
    std::vector<int> chosen = chooseTransports(identities, rank, {});
    for (int peer = 0; peer < 3; ++peer) EXPECT_EQ(chosen[peer], peer == rank ? -1 : 0) << rank << " " << peer;
  }
}

TEST(TransportRegistry, SameHostNameOnAnotherBootIsAnotherHost) {
  std::vector<RankIdentity> identities = {{"node/boot-1", 10, {}, {}}, {"node/boot-2", 11, {}, {}}};
  EXPECT_EQ(chooseTransports(identities, 0, {}), (std::vector<int>{-1, 1})) << "not shared memory: another host";
}

TEST(TransportRegistry, RanksOnTwoHostsUseSharedMemoryWithinAHostAndTcpAcross) {
  const std::vector<RankIdentity> identities = ranksOnHosts({"a", "a", "b", "b", "a"});
  ASSERT_GE(transportKinds().size(), 2u);
  EXPECT_STREQ(transportKinds()[1].name, "tcp");
  EXPECT_EQ(chooseTransports(identities, 1, {}), (std::vector<int>{0, -1, 1, 1, 0}));
  EXPECT_EQ(chooseTransports(identities, 2, {}), (std::vector<int>{1, 1, -1, 0, 1}));
}

TEST(TransportRegistry, ForcingTcpUsesItEvenOnOneHost) {
  TransportFilter filter = parseTransportFilter("tcp", "LOOM_TRANSPORTS");
  EXPECT_EQ(chooseTransports(ranksOnHosts({"a", "a", "a"}), 2, filter), (std::vector<int>{1, 1, -1}));
  EXPECT_EQ(chooseTransports(ranksOnHosts({"a", "a"}), 0, parseTransportFilter("^shm", "LOOM_TRANSPORTS")),
            (std::vector<int>{-1, 1}));
}

TEST(TransportRegistry, RanksOfTwoHostsWithOnlySharedMemoryNameThePairAndTheHosts) {
  std::string e = errorOf(ranksOnHosts({"a", "a", "b"}), 1, parseTransportFilter("shm", "LOOM_TRANSPORTS"));
  EXPECT_NE(
      e.find("no transport can connect rank 1 and rank 2 (rank 2 runs on host b and rank 1 on a): this Loom has "
             "shm, tcp, mem (shm for ranks of one host, tcp for any two, mem for ranks of one process when named), "
             "LOOM_TRANSPORTS=shm"),
      std::string::npos)
      << e;
}

TEST(TransportRegistry, ExcludingEveryKindLeavesNothingForOneHost) {
  TransportFilter filter = parseTransportFilter("^shm,tcp", "LOOM_TRANSPORTS");
  EXPECT_TRUE(filter.exclude);
  EXPECT_FALSE(filter.allows("shm"));
  EXPECT_FALSE(filter.allows("tcp"));
  std::string e = errorOf(ranksOnHosts({"a", "a"}), 0, filter);
  EXPECT_NE(e.find("(both run on host a)"), std::string::npos) << e;
  EXPECT_NE(e.find("LOOM_TRANSPORTS=^shm,tcp"), std::string::npos) << e;
}

TEST(TransportRegistry, ForcingSharedMemoryAllowsIt) {
  TransportFilter filter = parseTransportFilter("shm", "LOOM_TRANSPORTS");
  EXPECT_FALSE(filter.exclude);
  EXPECT_TRUE(filter.allows("shm"));
  EXPECT_EQ(chooseTransports(ranksOnHosts({"a", "a"}), 0, filter), (std::vector<int>{-1, 0}));
}

TEST(TransportRegistry, UnknownKindsAreRefusedNamingTheKnownOnes) {
  for (const char* text : {"ib", "shm,ib", "^nvlink", "SHM", "TCP", ",", "shm,"}) {
    try {
      parseTransportFilter(text, "LOOM_TRANSPORTS");
      ADD_FAILURE() << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), loomInvalidArgument);
      EXPECT_NE(std::string(e.what()).find(std::string("LOOM_TRANSPORTS='") + text + "' names transport '"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("which this Loom does not have (it has: shm, tcp, mem)"), std::string::npos)
          << e.what();
    }
  }
}

TEST(TransportRegistry, EmptySettingAllowsEveryKindButTheInMemoryOne) {
  TransportFilter filter = parseTransportFilter("", "LOOM_TRANSPORTS");
  EXPECT_TRUE(filter.names.empty());
  EXPECT_TRUE(filter.allows("shm"));
  EXPECT_TRUE(filter.allows("tcp"));
  EXPECT_FALSE(filter.allows("mem"));
  EXPECT_FALSE(parseTransportFilter("^shm", "LOOM_TRANSPORTS").allows("mem"));
}

// Threads of one process share a host and a pid; only the in-memory kind,
// and only when named, connects them without shared memory.
TEST(TransportRegistry, TheInMemoryKindConnectsRanksOfOneProcessOnlyWhenNamed) {
  const std::vector<RankIdentity> threads = {{"a/boot-a", 1000, {}, {}}, {"a/boot-a", 1000, {}, {}}, {"a/boot-a", 1001, {}, {}}};
  const int mem = 2;
  ASSERT_STREQ(transportKinds()[mem].name, "mem");
  EXPECT_EQ(chooseTransports(threads, 0, {}), (std::vector<int>{-1, 0, 0}));
  const TransportFilter named = parseTransportFilter("mem", "LOOM_TRANSPORTS");
  EXPECT_EQ(chooseKind(threads[0], threads[1], named), mem);
  EXPECT_EQ(chooseKind(threads[0], threads[2], named), -1) << "another process";
  EXPECT_EQ(chooseTransports(threads, 0, parseTransportFilter("mem,tcp", "LOOM_TRANSPORTS")),
            (std::vector<int>{-1, mem, 1}));
}

TEST(TransportRegistry, HostIdFromTheEnvironmentNamesTheHost) {
  setenv("LOOM_HOST_ID", "rack7-node3", 1);
  const RankIdentity named = RankIdentity::mine();
  EXPECT_EQ(named.host, "rack7-node3");
  EXPECT_EQ(named.hostName(), "rack7-node3");
  for (const char* bad : {"has space", "a/b", "tab\there", "\x7f"}) {
    setenv("LOOM_HOST_ID", bad, 1);
    try {
      RankIdentity::mine();
      ADD_FAILURE() << "LOOM_HOST_ID='" << bad << "' was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), loomInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("LOOM_HOST_ID='"), std::string::npos) << e.what();
    }
  }
  setenv("LOOM_HOST_ID", std::string(201, 'h').c_str(), 1);
  EXPECT_THROW(RankIdentity::mine(), Error);
  unsetenv("LOOM_HOST_ID");
  EXPECT_NE(RankIdentity::mine().host, "rack7-node3");
}

// An identity carries the host, the process and where in the host the rank
// runs; it round-trips, and anything else is refused naming the sender.
TEST(TransportRegistry, IdentitiesRoundTripAndMalformedOnesAreNamed) {
  topo::RankPlacement place{};
  std::snprintf(place.host, sizeof(place.host), "node7");
  place.package = 1;
  place.numa = 3;
  place.firstCpu = 24;
  place.cpuCount = 2;
  place.cpuMask[0] = uint64_t{3} << 24;
  place.cpuMask[15] = uint64_t{1} << 63;  // a '\n' byte or two inside the placement must not confuse the decoder
  std::snprintf(place.nic, sizeof(place.nic), "mlx5_1");
  const RankIdentity mine = RankIdentity::mine(place);
  const RankIdentity back = RankIdentity::decode(mine.encode(), 3);
  EXPECT_EQ(back.host, mine.host);
  EXPECT_EQ(back.pid, mine.pid);
  EXPECT_STREQ(back.place.host, "node7");
  EXPECT_EQ(back.place.package, 1);
  EXPECT_EQ(back.place.numa, 3);
  EXPECT_EQ(back.place.firstCpu, 24);
  EXPECT_EQ(back.place.cpuCount, 2);
  EXPECT_EQ(back.place.cpuMask[0], uint64_t{3} << 24);
  EXPECT_EQ(back.place.cpuMask[15], uint64_t{1} << 63);
  EXPECT_STREQ(back.place.nic, "mlx5_1");
  EXPECT_EQ(mine.hostName(), mine.host.substr(0, mine.host.find('/')));

  const std::string placeBytes(sizeof(place), '\n');  // every byte a separator
  const std::string good = mine.encode();
  for (const std::string& bad :
       {std::string(), std::string("host"), std::string("host\n12\n"), "host\n0\n" + placeBytes,
        "host\n-4\n" + placeBytes, "host\n12x\n" + placeBytes, "host12\n" + placeBytes,
        good.substr(1 + good.find('\n')), good.substr(0, good.size() - 1), good + "x"}) {
    try {
      RankIdentity::decode(bad, 3);
      ADD_FAILURE() << "an identity of " << bad.size() << " bytes was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), loomRemoteError);
      EXPECT_NE(std::string(e.what()).find("rank 3 sent a malformed identity at init"), std::string::npos);
    }
  }
  // Names that fill their fields arrive terminated.
  std::memset(place.host, 'h', sizeof(place.host));
  std::memset(place.nic, 'n', sizeof(place.nic));
  const RankIdentity full = RankIdentity::decode(RankIdentity::mine(place).encode(), 3);
  EXPECT_EQ(std::strlen(full.place.host), sizeof(place.host) - 1);
  EXPECT_EQ(std::strlen(full.place.nic), sizeof(place.nic) - 1);
}

// A rank's identity carries its host's GPUs and NIC ports, for the kinds
// that decide canConnect from them: they round-trip, names that hold the
// encoding's separators arrive with '?' there, and device lines that are
// not well formed are refused naming the sender.
TEST(TransportRegistry, IdentitiesCarryTheHostsDevices) {
  const std::unique_ptr<topo::Topology> machine = topo::readTopologyFile(
      std::string(LOOM_TEST_DATA_DIR) + "/topologies/hgx-a100-8gpu-nvswitch-cx6.nccl-topo.xml", nullptr);
  const std::vector<DeviceIdentity> devices = devicesOf(*machine);
  ASSERT_EQ(devices.size(), 13u) << "8 GPUs and 5 NIC ports";
  EXPECT_EQ(devices[0], (DeviceIdentity{DeviceIdentity::Kind::kGpu, "GPU0", "0000:13:00.0", 0, "", ""}));
  EXPECT_EQ(devices[8], (DeviceIdentity{DeviceIdentity::Kind::kNic, "mlx5_bond_0", "0000:06:00.0", 0, "rdma",
                                        "0x1e95b50003fd7010"}));
  for (int g = 0; g < 8; ++g) EXPECT_EQ(devices[g].kind, DeviceIdentity::Kind::kGpu) << g;

  std::vector<DeviceIdentity> sent = devices;
  sent.push_back({DeviceIdentity::Kind::kNic, "eth\t0", "", -1, "ip", "line\nbreak"});
  const RankIdentity back = RankIdentity::decode(RankIdentity::mine({}, sent).encode(), 2);
  ASSERT_EQ(back.devices.size(), sent.size());
  for (size_t d = 0; d + 1 < sent.size(); ++d) EXPECT_EQ(back.devices[d], sent[d]) << d;
  EXPECT_EQ(back.devices.back().name, "eth?0");
  EXPECT_EQ(back.devices.back().address, "line?break");

  const std::string head = RankIdentity::mine().encode();
  for (const char* line : {"gpu\tGPU0\t\t0\t\n", "tpu\tx\t\t0\t\t\n", "nic\teth0\t\tnear\tip\t\n",
                                  "nic\teth0\t\t-2\tip\t\n", "gpu\tGPU0\t\t0\t\t\t\n"}) {
    try {
      RankIdentity::decode(head + line, 2);
      ADD_FAILURE() << "device line '" << line << "' was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), loomRemoteError);
      EXPECT_NE(std::string(e.what()).find("rank 2 sent a malformed identity at init"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("device 0"), std::string::npos) << e.what();
    }
  }
}

// A registration offer carries one key per kind that registers memory, as
// many as the build has, and travels as plain bytes: they round-trip, and
// bytes that are not an offer of this build are refused naming the sender.
TEST(TransportRegistry, RegionOffersRoundTripWithAKeyPerRegisteringKind) {
  void* memory = allocateRegistrable(4096);
  RegionOffer offer = offerRegion("test", 7, static_cast<char*>(memory) + 64, 1000);
  size_t registering = 0;
  for (size_t k = 0; k < transportKinds().size(); ++k) {
    const bool registers = kindRegistersMemory(static_cast<int>(k));
    registering += registers;
    EXPECT_EQ(offer.keyOf(static_cast<int>(k)) != nullptr, registers) << transportKinds()[k].name;
  }
  ASSERT_EQ(offer.keys.size(), registering);
  ASSERT_GE(registering, 1u);

  const std::vector<unsigned char> bytes = offer.encode();
  const RegionOffer back = RegionOffer::decode(bytes.data(), bytes.size(), registering, 3);
  EXPECT_EQ(back.window, 7u);
  EXPECT_EQ(back.base, reinterpret_cast<uintptr_t>(memory) + 64);
  EXPECT_EQ(back.bytes, 1000u);
  ASSERT_EQ(back.keys.size(), offer.keys.size());
  for (size_t i = 0; i < back.keys.size(); ++i) {
    EXPECT_EQ(back.keys[i].kind, offer.keys[i].kind);
    EXPECT_EQ(std::memcmp(back.keys[i].bytes, offer.keys[i].bytes, kRegionKeyBytes), 0);
  }
  std::string why;
  EXPECT_NE(openRegion(ownRegionKind(), back, true, &why), nullptr) << why;

  auto refused = [&](std::vector<unsigned char> wrong, size_t kinds) {
    try {
      RegionOffer::decode(wrong.data(), wrong.size(), kinds, 3);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), loomRemoteError);
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused({bytes.begin(), bytes.end() - 1}, registering).find("rank 3 sent a registration offer"),
            std::string::npos);
  EXPECT_NE(refused({bytes.begin(), bytes.begin() + 8}, registering).find("rank 3"), std::string::npos);
  EXPECT_NE(refused(bytes, registering - 1).find("is every rank running the same Loom?"), std::string::npos);
  freeRegistrable(memory);
}

// loomMemAlloc's memory comes from the kind the registry names for it, and
// goes back there; what it did not hand out is refused with a sentence.
TEST(TransportRegistry, RegistrableMemoryComesFromTheRegistry) {
  void* memory = allocateRegistrable(100);
  ASSERT_NE(memory, nullptr);
  std::memset(memory, 0x5a, 100);
  int x = 0;
  try {
    freeRegistrable(&x);
    ADD_FAILURE() << "freeing memory the registry did not hand out was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomInvalidArgument) << e.what();
  }
  freeRegistrable(memory);
}

}  // namespace
}  // namespace loom

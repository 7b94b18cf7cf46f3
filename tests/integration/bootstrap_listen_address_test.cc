// Where a rendezvous listens: only on the address the ranks were told to
// use (the unique id's, or MASTER_ADDR's), not on every interface. Probed
// through 127.0.0.2, which is this host's too (127.0.0.0/8) but not the
// address the ranks were given: a listener on 0.0.0.0 answers there.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "bootstrap/unique_id.h"
#include "support/rank_harness.h"
#include "support/scoped_env.h"
#include "support/tcp_peer.h"

namespace loom::test {
namespace {

// Not an address of any host here (TEST-NET-2, RFC 5737).
constexpr const char* kElsewhere = "198.51.100.1";

uint16_t freeLoopbackPort() {
  uint16_t port = 0;
  const int fd = listenOnLoopback(&port);
  close(fd);
  return port;
}

// Waits (bounded) until something accepts on ipv4:port, then hangs up.
bool listenerComesUp(uint32_t ipv4, uint16_t port) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    const int fd = connectTo(ipv4, port);
    if (fd >= 0) {
      close(fd);
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST(ListenAddressTest, UniqueIdRendezvousListensOnItsInterfaceOnly) {
  ScopedEnv loopback("LOOM_SOCKET_IFNAME", "lo");
  loomUniqueId id;
  ASSERT_EQ(loomGetUniqueId(&id), loomSuccess) << loomGetLastError();
  const bootstrap::Endpoint at = bootstrap::decodeUniqueId(id).endpoint;
  EXPECT_EQ(at.address, bootstrap::IpAddress::ipv4(dotted("127.0.0.1")));
  EXPECT_EQ(connectTo(dotted("127.0.0.2"), at.port), -ECONNREFUSED)
      << "the rendezvous of an id for 127.0.0.1 answers on 127.0.0.2: it listens on every interface";
  // Let the rendezvous finish instead of waiting out its timeout.
  loomComm_t comm = nullptr;
  ASSERT_EQ(loomCommInitRank(&comm, 1, id, 0, nullptr), loomSuccess) << loomGetLastError();
  EXPECT_EQ(loomCommDestroy(comm), loomSuccess);
}

TEST(ListenAddressTest, RankZeroListensOnMasterAddrOnly) {
  const std::string port = std::to_string(freeLoopbackPort());
  HarnessOptions options;
  options.createComm = false;
  runRanks(
      RankMode::kProcesses, 2,
      [&](const RankContext& ctx) {
        setenv("RANK", std::to_string(ctx.rank).c_str(), 1);
        setenv("WORLD_SIZE", "2", 1);
        setenv("MASTER_ADDR", "127.0.0.1", 1);
        setenv("MASTER_PORT", port.c_str(), 1);
        setenv("LOOM_SECRET", "listen-address-test", 1);
        unsetenv("LOOM_SOCKET_IFNAME");
        if (ctx.rank == 1) {
          // Rank 0 is up and waiting for this rank: probe it first.
          const uint16_t p = static_cast<uint16_t>(std::stoi(port));
          ASSERT_TRUE(listenerComesUp(dotted("127.0.0.1"), p)) << "rank 0 never listened on 127.0.0.1:" << port;
          EXPECT_EQ(connectTo(dotted("127.0.0.2"), p), -ECONNREFUSED)
              << "rank 0's rendezvous for MASTER_ADDR=127.0.0.1 answers on 127.0.0.2";
        }
        loomComm_t comm = nullptr;
        ASSERT_EQ(loomCommInitFromEnv(&comm, nullptr), loomSuccess) << loomGetLastError();
        EXPECT_EQ(loomCommDestroy(comm), loomSuccess);
      },
      options);
}

TEST(ListenAddressTest, MasterAddrOfAnotherHostIsRefusedWithWhatToSet) {
  HarnessOptions options;
  options.createComm = false;
  runRanks(
      RankMode::kProcesses, 1,
      [](const RankContext&) {
        setenv("RANK", "0", 1);
        setenv("WORLD_SIZE", "1", 1);
        setenv("MASTER_ADDR", kElsewhere, 1);
        setenv("MASTER_PORT", "29500", 1);
        unsetenv("LOOM_SOCKET_IFNAME");
        loomConfig_t quick = LOOM_CONFIG_INITIALIZER;
        quick.timeoutMs = 2000;
        loomComm_t comm = nullptr;
        EXPECT_EQ(loomCommInitFromEnv(&comm, &quick), loomInvalidUsage);
        const std::string sentence = loomGetLastError();
        EXPECT_NE(sentence.find("MASTER_ADDR='198.51.100.1' (198.51.100.1) is not an address of this host"),
                  std::string::npos)
            << sentence;
        EXPECT_NE(sentence.find("LOOM_SOCKET_IFNAME"), std::string::npos) << sentence;
        EXPECT_EQ(comm, nullptr);
      },
      options);
}

}  // namespace
}  // namespace loom::test

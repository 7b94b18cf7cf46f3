// TCP between ranks over IPv6 on one host (LOOM_TRANSPORTS=tcp): the unique
// id carries loopback's ::1 when LOOM_SOCKET_FAMILY=AF_INET6 and
// LOOM_SOCKET_IFNAME=lo, MASTER_ADDR may be an IPv6 address, and each
// connection names the interface it listens on. Across fake hosts the
// multihost tests run the same over 2001:2::/48.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "bootstrap/listen_address.h"
#include "bootstrap/unique_id.h"
#include "core/handles.h"
#include "support/rank_harness.h"
#include "support/scoped_env.h"
#include "support/tcp_peer.h"

namespace loom::test {
namespace {

bool hasIpv6Loopback() {
  try {
    return bootstrap::isLocalAddress(bootstrap::IpAddress::loopback(AF_INET6));
  } catch (const Error&) {
    return false;  // no IPv6 in this kernel or container
  }
}

// AllReduce of rank+1 over every rank, checked, and the INFO line's link
// name for every peer.
void allReduceAndCheckLinks(loomComm_t comm, int rank, int nranks, const std::string& link) {
  std::vector<float> data(4096, static_cast<float>(rank + 1));
  ASSERT_EQ(loomAllReduce(data.data(), data.data(), data.size(), loomFloat32, loomSum, comm, nullptr, nullptr),
            loomSuccess)
      << loomCommGetLastError(comm);
  const float expected = static_cast<float>(nranks * (nranks + 1) / 2);
  for (float value : data) ASSERT_EQ(value, expected);
  const std::shared_ptr<Communicator> communicator = communicatorOf(comm);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    EXPECT_EQ(communicator->describeLink(peer), link) << "rank " << rank << " to " << peer;
  }
}

TEST(TcpIpv6Test, UniqueIdAndConnectionsUseIpv6Loopback) {
  if (!hasIpv6Loopback()) GTEST_SKIP() << "this host has no ::1";
  ScopedEnv transports("LOOM_TRANSPORTS", "tcp");
  ScopedEnv family("LOOM_SOCKET_FAMILY", "AF_INET6");
  ScopedEnv interfaces("LOOM_SOCKET_IFNAME", "=lo");
  runRanks(RankMode::kProcesses, 3, [](const RankContext& ctx) {
    EXPECT_EQ(bootstrap::decodeUniqueId(*ctx.id).endpoint.address, bootstrap::IpAddress::loopback(AF_INET6));
    allReduceAndCheckLinks(ctx.comm, ctx.rank, ctx.nranks, "TCP/lo (1 socket)");
  });
}

TEST(TcpIpv6Test, MasterAddrMayBeAnIpv6Address) {
  if (!hasIpv6Loopback()) GTEST_SKIP() << "this host has no ::1";
  uint16_t port = 0;
  close(listenOnLoopback(&port));
  HarnessOptions options;
  options.createComm = false;
  for (const char* master : {"::1", "[::1]"}) {
    runRanks(
        RankMode::kProcesses, 2,
        [&](const RankContext& ctx) {
          setenv("RANK", std::to_string(ctx.rank).c_str(), 1);
          setenv("WORLD_SIZE", "2", 1);
          setenv("MASTER_ADDR", master, 1);
          setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
          setenv("LOOM_SECRET", "ipv6-master-test", 1);
          setenv("LOOM_TRANSPORTS", "tcp", 1);
          setenv("LOOM_SOCKET_FAMILY", "AF_INET6", 1);
          setenv("LOOM_SOCKET_IFNAME", "lo", 1);
          setenv("LOOM_SOCKET_NSOCKS", "2", 1);
          loomComm_t comm = nullptr;
          ASSERT_EQ(loomCommInitFromEnv(&comm, nullptr), loomSuccess) << loomGetLastError();
          allReduceAndCheckLinks(comm, ctx.rank, 2, "TCP/lo (2 sockets)");
          EXPECT_EQ(loomCommDestroy(comm), loomSuccess);
        },
        options);
  }
}

TEST(TcpIpv6Test, ListThatSelectsNothingFailsNamingBothVariablesAndWhatIsUp) {
  ScopedEnv transports("LOOM_TRANSPORTS", "tcp");
  ScopedEnv family("LOOM_SOCKET_FAMILY", "AF_INET6");
  ScopedEnv interfaces("LOOM_SOCKET_IFNAME", "=no-such-if0");
  loomUniqueId id;
  EXPECT_EQ(loomGetUniqueId(&id), loomInvalidArgument);
  const std::string sentence = loomGetLastError();
  EXPECT_NE(sentence.find("LOOM_SOCKET_IFNAME='=no-such-if0' selects no interface that is up and running with an "
                          "IPv6 address (LOOM_SOCKET_FAMILY=AF_INET6); interfaces up: lo ("),
            std::string::npos)
      << sentence;
}

TEST(TcpIpv6Test, MalformedSocketVariablesFailInit) {
  {
    ScopedEnv family("LOOM_SOCKET_FAMILY", "inet6");
    loomUniqueId id;
    EXPECT_EQ(loomGetUniqueId(&id), loomInvalidArgument);
    EXPECT_NE(std::string(loomGetLastError()).find("LOOM_SOCKET_FAMILY='inet6' is not a socket family"),
              std::string::npos)
        << loomGetLastError();
  }
  {
    ScopedEnv interfaces("LOOM_SOCKET_IFNAME", "^");
    loomUniqueId id;
    EXPECT_EQ(loomGetUniqueId(&id), loomInvalidArgument);
    EXPECT_NE(std::string(loomGetLastError()).find("LOOM_SOCKET_IFNAME='^' names no interface"), std::string::npos)
        << loomGetLastError();
  }
}

}  // namespace
}  // namespace loom::test

// Admission to a rendezvous, spoken to byte by byte: a peer of another
// protocol version, a peer too slow with its hello, more strangers than the
// rendezvous keeps waiting, and ranks pointed at something that is not a
// Loom rendezvous, or one of another version. Each side says what is wrong.
#include <dirent.h>
#include <gtest/gtest.h>
#include <loom/loom.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "bootstrap/auth.h"
#include "bootstrap/handshake.h"
#include "bootstrap/listen_address.h"
#include "bootstrap/rendezvous.h"
#include "bootstrap/unique_id.h"
#include "support/tcp_peer.h"

namespace loom::test {
namespace {

using bootstrap::AdmissionLimits;
using bootstrap::Endpoint;
using bootstrap::IpAddress;
using bootstrap::RendezvousAddress;

const uint32_t kLoopback = htonl(INADDR_LOOPBACK);

struct TestRendezvous {
  RendezvousAddress address;
  loomUniqueId id;
};

TestRendezvous startOnLoopback(const AdmissionLimits& limits) {
  TestRendezvous r;
  r.address.secret = bootstrap::randomSecret();
  r.address.endpoint =
      bootstrap::startRendezvous(r.address.secret, Endpoint{IpAddress::ipv4(kLoopback), 0}, 60000, limits);
  r.id = bootstrap::encodeUniqueId(r.address);
  return r;
}

// Admits the one rank a rendezvous waits for, so its thread ends now
// instead of at its timeout.
void finishWithOneRank(const TestRendezvous& r) {
  loomComm_t comm = nullptr;
  ASSERT_EQ(loomCommInitRank(&comm, 1, r.id, 0, nullptr), loomSuccess) << loomGetLastError();
  EXPECT_EQ(loomCommDestroy(comm), loomSuccess);
}

// The verdict frame a stranger finds after the greeting, as text.
std::string verdictAfterGreeting(const std::string& received) {
  return received.size() > bootstrap::kGreetingSize + 8 ? received.substr(bootstrap::kGreetingSize + 8) : "";
}

TEST(AdmissionTest, HelloOfAnotherVersionIsToldWhyAndLogged) {
  TestRendezvous r = startOnLoopback({});
  const int fd = connectTo(kLoopback, r.address.endpoint.port);
  ASSERT_GE(fd, 0);
  bootstrap::Hello hello;
  hello.version = 999;
  hello.rank = 0;
  hello.nranks = 1;
  const std::string bytes = bootstrap::encodeHello(hello);
  ::testing::internal::CaptureStderr();
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  std::string received;
  EXPECT_TRUE(readUntilClosed(fd, 30000, &received));
  const std::string log = ::testing::internal::GetCapturedStderr();
  close(fd);
  const std::string verdict = verdictAfterGreeting(received);
  ASSERT_FALSE(verdict.empty()) << "no verdict after the greeting: " << bootstrap::quoteBytes(received);
  EXPECT_EQ(verdict[0], 'E');
  EXPECT_NE(verdict.find("refused this connection: it speaks Loom bootstrap protocol 999 and this side speaks " +
                         std::to_string(bootstrap::kProtocolVersion)),
            std::string::npos)
      << verdict;
  EXPECT_TRUE(std::regex_search(
      log, std::regex("LOOM WARN BOOTSTRAP the rendezvous at 127.0.0.1:[0-9]+ refused 127.0.0.1:[0-9]+: it speaks "
                      "Loom bootstrap protocol 999")))
      << log;
  finishWithOneRank(r);
}

// A rank that proves the secret but asks for more ranks than one
// rendezvous serves is refused, not given a table sized by its word.
TEST(AdmissionTest, ProvenHelloWithTooManyRanksIsRefused) {
  TestRendezvous r = startOnLoopback({});
  const int fd = connectTo(kLoopback, r.address.endpoint.port);
  ASSERT_GE(fd, 0);
  std::string greeting(bootstrap::kGreetingSize, '\0');
  ASSERT_EQ(recv(fd, greeting.data(), greeting.size(), MSG_WAITALL), static_cast<ssize_t>(greeting.size()));
  bootstrap::Hello hello;
  hello.proof = bootstrap::proveSecret(r.address.secret, bootstrap::decodeGreeting(greeting).nonce);
  hello.rank = 0;
  hello.nranks = 0x7fffffff;
  const std::string bytes = bootstrap::encodeHello(hello);
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  std::string received;
  EXPECT_TRUE(readUntilClosed(fd, 30000, &received));
  close(fd);
  ASSERT_GT(received.size(), 8u);
  const std::string verdict = received.substr(8);
  EXPECT_EQ(verdict[0], 'E');
  EXPECT_NE(verdict.find("refused this connection: nranks 2147483647 is not in [1, 16777216]"), std::string::npos)
      << verdict;
  finishWithOneRank(r);
}

TEST(AdmissionTest, PeerTooSlowWithItsHelloIsDroppedAndToldToTryAgain) {
  AdmissionLimits limits;
  limits.helloMs = 200;
  TestRendezvous r = startOnLoopback(limits);
  const int fd = connectTo(kLoopback, r.address.endpoint.port);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(send(fd, "LOOM", 4, MSG_NOSIGNAL), 4);  // a start, then silence
  std::string received;
  EXPECT_TRUE(readUntilClosed(fd, 30000, &received)) << "the rendezvous kept a silent connection open";
  close(fd);
  const std::string verdict = verdictAfterGreeting(received);
  ASSERT_FALSE(verdict.empty());
  EXPECT_EQ(verdict[0], 'R');
  EXPECT_NE(verdict.find("dropped this connection: it sent 4 of the " + std::to_string(bootstrap::kHelloSize) +
                         " bytes of a hello within 200 ms"),
            std::string::npos)
      << verdict;
  finishWithOneRank(r);
}

TEST(AdmissionTest, OldestWaitingConnectionMakesRoomForANewcomer) {
  AdmissionLimits limits;
  limits.maxWaiting = 2;
  TestRendezvous r = startOnLoopback(limits);
  std::vector<int> strangers;
  for (int i = 0; i < 3; ++i) {
    strangers.push_back(connectTo(kLoopback, r.address.endpoint.port));
    ASSERT_GE(strangers.back(), 0);
  }
  std::string received;
  EXPECT_TRUE(readUntilClosed(strangers[0], 30000, &received)) << "the oldest stranger was not dropped";
  const std::string verdict = verdictAfterGreeting(received);
  ASSERT_FALSE(verdict.empty());
  EXPECT_EQ(verdict[0], 'R');
  EXPECT_NE(verdict.find("it was the longest waiting of 2 connections yet to prove the secret"), std::string::npos)
      << verdict;
  for (int fd : strangers) close(fd);
  finishWithOneRank(r);
}

// With room for one connection at a time, ranks arriving together drop
// each other; each dropped rank connects again until all are in.
TEST(AdmissionTest, RanksDroppedForRoomConnectAgainUntilAllAreIn) {
  AdmissionLimits limits;
  limits.maxWaiting = 1;
  TestRendezvous r = startOnLoopback(limits);
  std::vector<int> strangers;
  for (int i = 0; i < 8; ++i) {
    strangers.push_back(connectTo(kLoopback, r.address.endpoint.port));
    ASSERT_GE(strangers.back(), 0);
  }
  constexpr int kRanks = 4;
  std::vector<loomComm_t> comms(kRanks, nullptr);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&, rank] {
      loomConfig_t config = LOOM_CONFIG_INITIALIZER;
      config.timeoutMs = 60000;
      EXPECT_EQ(loomCommInitRank(&comms[rank], kRanks, r.id, rank, &config), loomSuccess) << loomGetLastError();
    });
  }
  for (auto& t : threads) t.join();
  threads.clear();
  for (int rank = 0; rank < kRanks; ++rank)
    if (comms[rank] != nullptr)
      threads.emplace_back([&, rank] { EXPECT_EQ(loomCommDestroy(comms[rank]), loomSuccess); });
  for (auto& t : threads) t.join();
  for (int fd : strangers) close(fd);
  EXPECT_EQ(waitUntilNothingHeldOnPort(r.address.endpoint.port, 30000), 0);
}

// A rendezvous whose process has almost no file descriptors left, flooded
// with idle strangers: each accept that finds none drops the longest-waiting
// stranger for room, and the real ranks, dropped now and then among them,
// connect again until they are in. The rendezvous runs in a child process
// (forked before this process has any thread) so only it runs short.
TEST(AdmissionTest, RendezvousOutOfDescriptorsStillAdmitsTheRanks) {
  int idPipe[2];
  ASSERT_EQ(pipe(idPipe), 0);
  const pid_t keeper = fork();
  ASSERT_GE(keeper, 0);
  if (keeper == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close(idPipe[0]);
    int open = 0;
    if (DIR* dir = opendir("/proc/self/fd")) {
      while (readdir(dir) != nullptr) ++open;
      closedir(dir);
    }
    // Room for the listener and a dozen more: far fewer than the flood.
    const rlimit few{static_cast<rlim_t>(open + 12), static_cast<rlim_t>(open + 12)};
    loomUniqueId id{};
    if (setrlimit(RLIMIT_NOFILE, &few) != 0 || loomGetUniqueId(&id) != loomSuccess) _exit(3);
    if (write(idPipe[1], &id, sizeof(id)) != static_cast<ssize_t>(sizeof(id))) _exit(4);
    for (;;) pause();
  }
  close(idPipe[1]);
  loomUniqueId id{};
  const bool haveId = read(idPipe[0], &id, sizeof(id)) == static_cast<ssize_t>(sizeof(id));
  close(idPipe[0]);
  if (!haveId) {
    kill(keeper, SIGKILL);
    waitpid(keeper, nullptr, 0);
    FAIL() << "the rendezvous process made no unique id";
  }
  const Endpoint at = bootstrap::decodeUniqueId(id).endpoint;
  std::vector<int> strangers;
  for (int i = 0; i < 48; ++i) {
    const int fd = connectTo(at.address.ipv4NetworkOrder(), at.port);
    if (fd >= 0) strangers.push_back(fd);
  }
  EXPECT_EQ(strangers.size(), 48u);
  constexpr int kRanks = 3;
  std::vector<loomComm_t> comms(kRanks, nullptr);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < kRanks; ++rank) {
    threads.emplace_back([&, rank] {
      loomConfig_t config = LOOM_CONFIG_INITIALIZER;
      config.timeoutMs = 60000;
      EXPECT_EQ(loomCommInitRank(&comms[rank], kRanks, id, rank, &config), loomSuccess) << loomGetLastError();
    });
  }
  for (auto& t : threads) t.join();
  threads.clear();
  for (int rank = 0; rank < kRanks; ++rank) {
    if (comms[rank] == nullptr) continue;
    threads.emplace_back([&, rank] {
      int32_t in = rank, sum = 0;
      EXPECT_EQ(loomAllReduce(&in, &sum, 1, loomInt32, loomSum, comms[rank], nullptr, nullptr), loomSuccess);
      EXPECT_EQ(sum, 0 + 1 + 2);
      EXPECT_EQ(loomCommDestroy(comms[rank]), loomSuccess);
    });
  }
  for (auto& t : threads) t.join();
  // Every stranger was dropped and told so, or is still waiting: none was
  // admitted in a rank's place (the AllReduce above proves the ranks met).
  for (int fd : strangers) close(fd);
  kill(keeper, SIGKILL);
  int status = 0;
  waitpid(keeper, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "the rendezvous process ended on its own";
}

// A fake rendezvous: accepts one connection, sends `greeting`, reads what
// the rank sends back, then closes.
class FakeRendezvous {
 public:
  explicit FakeRendezvous(std::string greeting) {
    listener_ = listenOnLoopback(&port_);
    thread_ = std::thread([this, greeting] {
      const int fd = accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      send(fd, greeting.data(), greeting.size(), MSG_NOSIGNAL);
      readUntilClosed(fd, 2000, &heard_);
      close(fd);
    });
  }
  ~FakeRendezvous() {
    shutdown(listener_, SHUT_RDWR);  // wakes accept() if no rank came
    thread_.join();
    close(listener_);
  }
  loomUniqueId id() const {
    return bootstrap::encodeUniqueId(
        RendezvousAddress{Endpoint{IpAddress::ipv4(kLoopback), port_}, bootstrap::randomSecret()});
  }

 private:
  int listener_ = -1;
  uint16_t port_ = 0;
  std::string heard_;
  std::thread thread_;
};

std::string initAgainst(const FakeRendezvous& fake) {
  loomConfig_t quick = LOOM_CONFIG_INITIALIZER;
  quick.timeoutMs = 10000;
  loomComm_t comm = nullptr;
  EXPECT_EQ(loomCommInitRank(&comm, 2, fake.id(), 0, &quick), loomRemoteError);
  EXPECT_EQ(comm, nullptr);
  return loomGetLastError();
}

TEST(AdmissionTest, RankToldWhenTheAddressIsNotALoomRendezvous) {
  FakeRendezvous http("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n");
  const std::string sentence = initAgainst(http);
  EXPECT_TRUE(std::regex_search(sentence, std::regex("the rendezvous at 127.0.0.1:[0-9]+ is not a Loom rendezvous: "
                                                     "its first bytes \"HTTP/1.1 400\" are not a Loom rendezvous "
                                                     "greeting")))
      << sentence;
  EXPECT_NE(sentence.find("MASTER_ADDR and MASTER_PORT, or the unique id"), std::string::npos) << sentence;
}

TEST(AdmissionTest, RankToldWhenTheRendezvousSpeaksAnotherVersion) {
  std::string greeting = bootstrap::encodeGreeting({});
  const uint32_t future = 999;
  greeting.replace(8, sizeof(future), reinterpret_cast<const char*>(&future), sizeof(future));
  FakeRendezvous newer(greeting);
  const std::string sentence = initAgainst(newer);
  EXPECT_NE(sentence.find("cannot admit this rank: it speaks Loom bootstrap protocol 999 and this side speaks " +
                          std::to_string(bootstrap::kProtocolVersion) +
                          ": "
                          "every rank must run the same Loom version"),
            std::string::npos)
      << sentence;
}

TEST(ListenAddressPolicyTest, MasterAddrElsewhereFallsBackToTheNamedInterface) {
  const IpAddress elsewhere = IpAddress::ipv4(dotted("198.51.100.1"));  // TEST-NET-2: no host's here
  const IpAddress loopback = IpAddress::ipv4(kLoopback);
  EXPECT_FALSE(bootstrap::isLocalAddress(elsewhere));
  EXPECT_TRUE(bootstrap::isLocalAddress(IpAddress::ipv4(dotted("127.0.0.2"))));
  bootstrap::InterfaceRequest lo;
  lo.list = bootstrap::parseInterfaceList("=lo", "LOOM_SOCKET_IFNAME");
  lo.family = bootstrap::AddressFamily::kIpv4;
  EXPECT_EQ(bootstrap::masterListenAddress("198.51.100.1", elsewhere, lo), loopback);
  EXPECT_EQ(bootstrap::masterListenAddress("localhost", loopback, {}), loopback);
}

TEST(ListenAddressPolicyTest, Ipv6MasterAddrListensWhereItPoints) {
  if (!bootstrap::isLocalAddress(IpAddress::loopback(AF_INET6))) GTEST_SKIP() << "this host has no ::1";
  const IpAddress elsewhere = *bootstrap::parseNumericAddress("2001:db8::1");  // documentation range (RFC 3849)
  EXPECT_FALSE(bootstrap::isLocalAddress(elsewhere));
  const IpAddress master = bootstrap::resolveAddress("[::1]", bootstrap::AddressFamily::kAny, "MASTER_ADDR");
  EXPECT_EQ(master, IpAddress::loopback(AF_INET6));
  EXPECT_EQ(bootstrap::masterListenAddress("[::1]", master, {}), master);
  bootstrap::InterfaceRequest lo;
  lo.list = bootstrap::parseInterfaceList("=lo", "LOOM_SOCKET_IFNAME");
  lo.family = bootstrap::AddressFamily::kIpv6;
  EXPECT_EQ(bootstrap::masterListenAddress("2001:db8::1", elsewhere, lo), IpAddress::loopback(AF_INET6));
  try {
    bootstrap::masterListenAddress("2001:db8::1", elsewhere, {});
    ADD_FAILURE() << "an IPv6 MASTER_ADDR of another host was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MASTER_ADDR='2001:db8::1' (2001:db8::1) is not an address of this host"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace loom::test

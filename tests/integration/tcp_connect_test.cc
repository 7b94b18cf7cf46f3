// How ranks' TCP connections are made at init, against what real networks
// and strangers do: an address whose packets are dropped must not hold a
// rank past its timeout (a blocking connect waits for the kernel's two
// minutes of SYN retries), and connections that never greet, greet wrongly
// or speak another protocol must not delay the ranks' own connections,
// which the listener once judged one at a time, five seconds each.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "bootstrap/socket.h"
#include "support/tcp_peer.h"
#include "transport/tcp/tcp_accept.h"
#include "transport/tcp/tcp_hello.h"

namespace loom::test {
namespace {

using Clock = std::chrono::steady_clock;
using tcp::acceptPeers;
using tcp::ExpectedConnections;
using tcp::Hello;
using tcp::makeHello;

int64_t msSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

// Runs `body` in a child process and returns what it wrote to the pipe it
// gets (its verdict), or why none came. The child is killed if it runs
// past `limitMs`, so a connect that hangs fails the test instead of it.
std::string inChild(int64_t limitMs, const std::function<std::string()>& body) {
  int pipeFds[2];
  if (pipe(pipeFds) != 0) return "pipe failed";
  const pid_t child = fork();
  if (child == 0) {
    close(pipeFds[0]);
    std::string verdict;
    try {
      verdict = body();
    } catch (const std::exception& e) {
      verdict = std::string("threw: ") + e.what();
    }
    (void)!write(pipeFds[1], verdict.data(), verdict.size());
    _exit(0);
  }
  close(pipeFds[1]);
  std::string verdict;
  bool closed = false;
  const auto start = Clock::now();
  while (!closed && msSince(start) < limitMs) {
    pollfd p{pipeFds[0], POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    char buffer[4096];
    const ssize_t n = read(pipeFds[0], buffer, sizeof(buffer));
    if (n > 0) verdict.append(buffer, static_cast<size_t>(n));
    closed = n == 0 || (n < 0 && errno != EINTR);
  }
  close(pipeFds[0]);
  if (!closed) kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  return closed ? verdict : "the child was still running after " + std::to_string(limitMs) + " ms: " + verdict;
}

// The caller is root: network namespaces need it.
bool root() {
  return geteuid() == 0;
}

TEST(ConnectTest, AnAddressThatNeverAnswersFailsAtTheDeadlineSayingSo) {
  if (!root()) GTEST_SKIP() << "needs root, for a network namespace whose interface drops every packet";
  // In a namespace of its own (gone with the child, and its links with
  // it), a SYN that nothing answers, as behind a firewall that drops.
  const std::string verdict = inChild(30000, [] {
    if (unshare(CLONE_NEWNET) != 0) return std::string("unshare failed: ") + std::strerror(errno);
    // A veth pair: the near end has the address, the far end none, and the
    // near end knows the far end's MAC (no ARP to fail), so the SYN crosses
    // and the far end's kernel drops it: not for any address it has.
    if (std::system("ip link add loomnear type veth peer name loomfar && ip link set loomfar address "
                    "02:00:00:00:00:02 && ip addr add 198.18.250.1/24 dev loomnear && ip link set loomnear up && "
                    "ip link set loomfar up && ip neigh add 198.18.250.2 lladdr 02:00:00:00:00:02 dev loomnear "
                    "nud permanent") != 0)
      return std::string("could not set up the veth pair");
    const bootstrap::Endpoint silent{*bootstrap::parseNumericAddress("198.18.250.2"), 29500};
    const auto start = Clock::now();
    try {
      bootstrap::connectTcp(silent, Deadline::afterMs(700), "a silent host");
      return std::string("connected to an address that drops everything");
    } catch (const Error& e) {
      const int64_t waited = msSince(start);
      return std::string(e.code() == loomTimeout ? "timeout" : "other code") + " after " +
             (waited < 5000 ? "less than 5 s" : std::to_string(waited) + " ms") + ": " + e.what();
    }
  });
  EXPECT_NE(verdict.find("timeout after less than 5 s: "), std::string::npos) << verdict;
  EXPECT_NE(verdict.find("cannot connect to a silent host at 198.18.250.2:29500: no answer in "), std::string::npos)
      << verdict;
  EXPECT_NE(verdict.find("firewall"), std::string::npos) << verdict;
}

TEST(ConnectTest, ARefusedAddressIsRetriedUntilTheDeadline) {
  uint16_t port = 0;
  const int closedListener = listenOnLoopback(&port);
  ASSERT_GE(closedListener, 0);
  close(closedListener);  // nothing listens there now: every attempt is refused
  const auto start = Clock::now();
  try {
    bootstrap::connectTcp({bootstrap::IpAddress::loopback(AF_INET), port}, Deadline::afterMs(300), "nobody");
    FAIL() << "connected to a closed port";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomTimeout) << e.what();
    EXPECT_NE(std::string(e.what()).find("Connection refused"), std::string::npos) << e.what();
  }
  EXPECT_GE(msSince(start), 300) << "gave up before the deadline";
}

// A client of the acceptor: connects and sends what it is told to.
int connectAndSend(uint16_t port, const void* bytes, size_t size) {
  const int fd = connectTo(dotted("127.0.0.1"), port);
  if (fd >= 0 && size > 0) {
    EXPECT_EQ(send(fd, bytes, size, MSG_NOSIGNAL), static_cast<ssize_t>(size));
  }
  return fd;
}

int connectRank(uint16_t port, const bootstrap::Secret& token, int rank, int socket) {
  const Hello hello = makeHello(token, rank, socket);
  return connectAndSend(port, &hello, sizeof(hello));
}

struct Listener {
  bootstrap::Socket socket;
  uint16_t port = 0;
  Listener() { socket = bootstrap::listenTcp({bootstrap::IpAddress::loopback(AF_INET), 0}, &port); }
};

using Accepted = std::vector<std::vector<bootstrap::Socket>>;

std::future<Accepted> acceptInBackground(const Listener& listener, const ExpectedConnections& expected) {
  return std::async(std::launch::async,
                    [&] { return acceptPeers(listener.socket.fd(), expected, Deadline::afterMs(expected.timeoutMs)); });
}

// The byte that arrives next on `socket`; -1 if none comes in 5 s.
int nextByte(const bootstrap::Socket& socket) {
  pollfd p{socket.fd(), POLLIN, 0};
  char byte = 0;
  if (poll(&p, 1, 5000) != 1 || recv(socket.fd(), &byte, 1, 0) != 1) return -1;
  return static_cast<unsigned char>(byte);
}

// Rank 3 waits for two sockets each from ranks 0 and 2.
ExpectedConnections rank3(const bootstrap::Secret& token) {
  ExpectedConnections expected;
  expected.rank = 3;
  expected.timeoutMs = 3000;
  expected.token = token;
  expected.peers = {0, 2};
  expected.socketsPerPeer = 2;
  return expected;
}

TEST(AcceptTest, StrangersAheadOfTheRanksDelayNoneAndAreClosed) {
  Listener listener;
  const bootstrap::Secret token = bootstrap::randomSecret();
  const ExpectedConnections expected = rank3(token);

  // Ahead of every rank: three that never speak, one speaking HTTP, one
  // with another communicator's token, one naming a rank that does not
  // connect here, one naming a socket out of range, one that leaves.
  std::vector<int> strangers;
  for (int i = 0; i < 3; ++i) strangers.push_back(connectAndSend(listener.port, nullptr, 0));
  const std::string http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  strangers.push_back(connectAndSend(listener.port, http.data(), http.size()));
  strangers.push_back(connectRank(listener.port, bootstrap::randomSecret(), 0, 0));
  strangers.push_back(connectRank(listener.port, token, 1, 0));
  strangers.push_back(connectRank(listener.port, token, 2, 7));
  close(connectAndSend(listener.port, "LOOM", 4));
  for (int fd : strangers) ASSERT_GE(fd, 0);

  // The ranks' sockets, each then sending one byte that says which it is.
  // The strangers' five seconds to greet outlast the whole wait (3 s): one
  // judged at a time, the first idle one alone would time the wait out.
  std::future<Accepted> accepting = acceptInBackground(listener, expected);
  std::vector<int> ranks;
  for (int peer : {0, 2})
    for (int s = 0; s < 2; ++s) {
      const int fd = connectRank(listener.port, token, peer, s);
      ASSERT_GE(fd, 0);
      const char which = static_cast<char>(peer * 10 + s);
      ASSERT_EQ(send(fd, &which, 1, MSG_NOSIGNAL), 1);
      ranks.push_back(fd);
    }
  Accepted sockets;
  try {
    sockets = accepting.get();
  } catch (const Error& e) {
    FAIL() << e.what();
  }
  ASSERT_EQ(sockets.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_EQ(sockets[i].size(), 2u);
    for (int s = 0; s < 2; ++s) {
      char which = -1;
      pollfd p{sockets[i][s].fd(), POLLIN, 0};
      ASSERT_EQ(poll(&p, 1, 5000), 1);
      ASSERT_EQ(recv(sockets[i][s].fd(), &which, 1, 0), 1);
      EXPECT_EQ(which, static_cast<char>(expected.peers[i] * 10 + s))
          << "socket " << s << " of rank " << expected.peers[i];
    }
  }
  // Every stranger was closed, the idle ones too, once the wait was over.
  for (size_t i = 0; i < strangers.size(); ++i) {
    std::string received;
    EXPECT_TRUE(readUntilClosed(strangers[i], 2000, &received)) << "stranger " << i << " is still connected";
    EXPECT_EQ(received, "") << "stranger " << i;
    close(strangers[i]);
  }
  for (int fd : ranks) close(fd);
}

TEST(AcceptTest, AConnectionThatDoesNotGreetInTimeIsDroppedWhileTheWaitGoesOn) {
  Listener listener;
  const bootstrap::Secret token = bootstrap::randomSecret();
  ExpectedConnections expected = rank3(token);
  expected.peers = {0};
  expected.socketsPerPeer = 1;
  expected.helloMs = 200;
  const int idle = connectAndSend(listener.port, nullptr, 0);
  // Half a greeting, then silence: judged on what came, dropped in time.
  const Hello hello = makeHello(token, 0, 0);
  const int half = connectAndSend(listener.port, &hello, sizeof(hello) / 2);
  ASSERT_GE(idle, 0);
  ASSERT_GE(half, 0);
  std::future<Accepted> accepting = acceptInBackground(listener, expected);
  std::string received;
  EXPECT_TRUE(readUntilClosed(idle, 2000, &received)) << "the idle connection was not dropped";
  EXPECT_TRUE(readUntilClosed(half, 2000, &received)) << "the half greeting was not dropped";
  const int rank0 = connectRank(listener.port, token, 0, 0);
  ASSERT_GE(rank0, 0);
  EXPECT_NO_THROW(accepting.get());
  close(idle);
  close(half);
  close(rank0);
}

TEST(AcceptTest, ASocketConnectedTwiceKeepsTheFirst) {
  Listener listener;
  const bootstrap::Secret token = bootstrap::randomSecret();
  ExpectedConnections expected = rank3(token);
  expected.peers = {0};
  std::future<Accepted> accepting = acceptInBackground(listener, expected);
  const int first = connectRank(listener.port, token, 0, 0);
  ASSERT_GE(first, 0);
  // Judged in the order they arrive: the second comes once the first has.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const int twice = connectRank(listener.port, token, 0, 0);
  ASSERT_GE(twice, 0);
  std::string received;
  EXPECT_TRUE(readUntilClosed(twice, 2000, &received)) << "the second socket 0 was kept";
  const int other = connectRank(listener.port, token, 0, 1);
  const Accepted sockets = accepting.get();
  const char mark = 'f';
  ASSERT_EQ(send(first, &mark, 1, MSG_NOSIGNAL), 1);
  EXPECT_EQ(nextByte(sockets[0][0]), 'f');
  close(first);
  close(twice);
  close(other);
}

TEST(AcceptTest, RanksThatNeverConnectAreNamedAtTheDeadline) {
  Listener listener;
  const bootstrap::Secret token = bootstrap::randomSecret();
  ExpectedConnections expected = rank3(token);
  expected.timeoutMs = 400;
  const int one = connectRank(listener.port, token, 0, 0);
  const int two = connectRank(listener.port, token, 0, 1);
  try {
    acceptPeers(listener.socket.fd(), expected, Deadline::afterMs(expected.timeoutMs));
    FAIL() << "accepted without rank 2";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), loomTimeout);
    EXPECT_EQ(std::string(e.what()), "rank 3 waited 400 ms for the TCP connections of rank 2 (2 of 4 arrived)");
  }
  close(one);
  close(two);
}

// A large job's lower ranks may all connect before this rank accepts
// (it connects to the ranks above it first): 300 sockets queued at once,
// every hello already sent. Taken in one burst with no hello read, the
// listener once closed the oldest past 256 of them as strangers, then
// timed out waiting for the very ranks it had dropped.
TEST(AcceptTest, MoreRanksQueuedThanTheStrangerCapAreAllAccepted) {
  Listener listener;
  const bootstrap::Secret token = bootstrap::randomSecret();
  ExpectedConnections expected;
  expected.rank = 150;
  expected.timeoutMs = 5000;
  expected.token = token;
  expected.socketsPerPeer = 2;
  std::vector<int> clients;
  for (int peer = 0; peer < 150; ++peer) {
    expected.peers.push_back(peer);
    for (int s = 0; s < 2; ++s) {
      const int fd = connectRank(listener.port, token, peer, s);
      ASSERT_GE(fd, 0) << "socket " << s << " of rank " << peer;
      clients.push_back(fd);
    }
  }
  // And a silent stranger behind them in the queue: taken in the same
  // burst, and closed once the ranks are all in.
  const int silent = connectAndSend(listener.port, nullptr, 0);
  ASSERT_GE(silent, 0);
  try {
    const Accepted sockets = acceptPeers(listener.socket.fd(), expected, Deadline::afterMs(expected.timeoutMs));
    ASSERT_EQ(sockets.size(), 150u);
    for (const auto& peer : sockets)
      for (const auto& socket : peer) EXPECT_TRUE(socket.valid());
  } catch (const Error& e) {
    FAIL() << e.what();
  }
  std::string received;
  EXPECT_TRUE(readUntilClosed(silent, 2000, &received)) << "the stranger is still connected";
  EXPECT_EQ(received, "");
  for (int fd : clients) close(fd);
  close(silent);
}

TEST(AcceptTest, NoFileDescriptorsLeftIsSaidAtOnceNotTimedOut) {
  Listener listener;
  const bootstrap::Secret token = bootstrap::randomSecret();
  const ExpectedConnections expected = rank3(token);
  // A rank's connection waits in the listener's queue; the child may open
  // nothing more (its descriptors fill its limit), so its accept fails with
  // EMFILE.
  const int waiting = connectRank(listener.port, token, 0, 0);
  ASSERT_GE(waiting, 0);
  const std::string verdict = inChild(20000, [&] {
    int highest = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd"))
      highest = std::max(highest, std::stoi(entry.path().filename().string()));
    const rlimit limit{static_cast<rlim_t>(highest + 1), static_cast<rlim_t>(highest + 1)};
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return std::string("setrlimit failed");
    while (open("/dev/null", O_RDONLY | O_CLOEXEC) >= 0) {
    }
    const auto start = Clock::now();
    try {
      acceptPeers(listener.socket.fd(), expected, Deadline::afterMs(10000));
      return std::string("accepted");
    } catch (const Error& e) {
      return std::string(e.code() == loomSystemError ? "system error" : "other code") +
             (msSince(start) < 5000 ? " at once: " : " late: ") + e.what();
    }
  });
  EXPECT_NE(verdict.find("system error at once: rank 3 cannot accept its peers' TCP connections: Too many open "
                         "files (it needs a socket per peer"),
            std::string::npos)
      << verdict;
  EXPECT_NE(verdict.find("ulimit -n"), std::string::npos) << verdict;
  close(waiting);
}

}  // namespace
}  // namespace loom::test

// The engine alone, over the in-memory transport (transport/mem/): ranks are
// threads of this process, each with its own engine and connections, and a
// fabric between them that can delay messages and fail ranks. Lanes,
// groups, timeouts, abort, failure propagation and the sleep/wake contract,
// with no rendezvous, processes or sockets in the way.
#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "collectives/collectives.h"
#include "support/fabric_ranks.h"
#include "transport/mem/mem_transport.h"

namespace loom::test {
namespace {

std::vector<int32_t> numbered(size_t count, int32_t first) {
  std::vector<int32_t> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = first + static_cast<int32_t>(i);
  return values;
}

struct Ended {
  loomResult_t result;
  std::string error;
};

// Runs op to its end on this thread, as a blocking call does.
Ended run(FabricRank& rank, OperationPtr op) {
  std::shared_ptr<Request> request = requestOf(op);
  rank.engine().run(std::move(op));
  return {request->result(), request->error()};
}

Ended wait(const std::shared_ptr<Request>& request) {
  request->wait(-1);
  return {request->result(), request->error()};
}

std::shared_ptr<Request> post(FabricRank& rank, OperationPtr op) {
  std::shared_ptr<Request> request = requestOf(op);
  rank.engine().post(std::move(op));
  return request;
}

CollectiveArgs allReduceArgs(const int32_t* send, int32_t* recv, size_t count) {
  return collectiveArgs(send, recv, count, loomInt32, loomSum);
}

FabricOptions options(int nranks, int64_t timeoutMs = 30000) {
  FabricOptions chosen;
  chosen.nranks = nranks;
  chosen.timeoutMs = timeoutMs;
  return chosen;
}

// Many slots' worth (the fabric's slots are 4 KiB): every message waits for
// its receiver to free slots more than once.
constexpr size_t kManySlots = 10000;

TEST(Engine, IrecvThenIsendOnBothSidesCompletes) {
  auto ranks = makeFabricRanks(options(2));
  onEveryRank(ranks, [](FabricRank& rank) {
    const int peer = 1 - rank.rank();
    std::vector<int32_t> out = numbered(kManySlots, rank.rank() * 100000), in(kManySlots, -1);
    auto received = post(rank, rank.recv(peer, in.data(), in.size(), loomInt32));
    auto sent = post(rank, rank.send(peer, out.data(), out.size(), loomInt32));
    EXPECT_EQ(wait(received).result, loomSuccess);
    EXPECT_EQ(wait(sent).result, loomSuccess);
    EXPECT_EQ(in, numbered(kManySlots, peer * 100000)) << "rank " << rank.rank();
  });
}

// Recvs of different tags from one peer run side by side: a message whose
// tag no running Recv waits for is set aside (the inbox's stash), so the
// FIFO behind it moves. Rank 0 sends tags 3, 1, 2 (the first of many
// slots), messages delayed at random; rank 1 receives 2, then 3, then 1,
// one at a time, so both 3 and 1 are set aside before their Recvs run.
TEST(Engine, RecvsTakeTheirTagsMessagesWhateverOrderTheyCameIn) {
  FabricOptions chosen = options(2);
  chosen.faults.maxDelayMicros = 50;
  chosen.faults.seed = 11;
  auto ranks = makeFabricRanks(chosen);
  const std::vector<int32_t> tag3 = numbered(kManySlots, 3000000), tag1 = numbered(5, 1000), tag2 = numbered(3, 2000);
  onEveryRank(ranks, [&](FabricRank& rank) {
    if (rank.rank() == 0) {
      auto a = post(rank, rank.send(1, tag3.data(), tag3.size(), loomInt32, 3));
      auto b = post(rank, rank.send(1, tag1.data(), tag1.size(), loomInt32, 1));
      auto c = post(rank, rank.send(1, tag2.data(), tag2.size(), loomInt32, 2));
      for (auto* request : {&a, &b, &c}) EXPECT_EQ(wait(*request).result, loomSuccess);
      return;
    }
    std::vector<int32_t> in2(tag2.size(), -1), in3(tag3.size(), -1), in1(tag1.size(), -1);
    EXPECT_EQ(run(rank, rank.recv(0, in2.data(), in2.size(), loomInt32, 2)).result, loomSuccess);
    EXPECT_EQ(run(rank, rank.recv(0, in3.data(), in3.size(), loomInt32, 3)).result, loomSuccess);
    EXPECT_EQ(run(rank, rank.recv(0, in1.data(), in1.size(), loomInt32, 1)).result, loomSuccess);
    EXPECT_EQ(in2, tag2);
    EXPECT_EQ(in3, tag3);
    EXPECT_EQ(in1, tag1);
  });
}

// A job that gives every message a tag of its own (a step number, say)
// holds no more matching state than one that uses one tag: after 300
// messages of distinct tags, received in reverse order (all but the last
// stashed first) and from any source, nothing is left per tag on either
// side.
TEST(Engine, DistinctTagsLeaveNoStateBehind) {
  FabricOptions chosen = options(3);
  chosen.faults.maxDelayMicros = 20;
  chosen.faults.seed = 5;
  auto ranks = makeFabricRanks(chosen);
  constexpr int kTags = 300;
  onEveryRank(ranks, [&](FabricRank& rank) {
    if (rank.rank() != 2) {
      std::vector<std::shared_ptr<Request>> sends;
      std::vector<int32_t> values(kTags);
      for (int tag = 1; tag <= kTags; ++tag) {
        values[tag - 1] = rank.rank() * 100000 + tag;
        sends.push_back(post(rank, rank.send(2, &values[tag - 1], 1, loomInt32, tag)));
      }
      for (auto& request : sends) EXPECT_EQ(wait(request).result, loomSuccess);
    } else {
      std::vector<std::shared_ptr<Request>> recvs;
      std::vector<int32_t> got(kTags, -1);
      for (int tag = kTags; tag >= 1; --tag)
        recvs.push_back(post(rank, rank.recv(0, &got[tag - 1], 1, loomInt32, tag)));
      for (auto& request : recvs) EXPECT_EQ(wait(request).result, loomSuccess);
      for (int tag = 1; tag <= kTags; ++tag) EXPECT_EQ(got[tag - 1], tag) << "tag " << tag;
      std::vector<int32_t> any(kTags, -1);
      std::vector<int> sources(kTags, -1);
      for (int tag = kTags; tag >= 1; --tag)
        EXPECT_EQ(
            run(rank, rank.recv(PostedRecvs::kAnySource, &any[tag - 1], 1, loomInt32, tag, &sources[tag - 1])).result,
            loomSuccess);
      for (int tag = 1; tag <= kTags; ++tag) {
        EXPECT_EQ(sources[tag - 1], 1) << "tag " << tag;
        EXPECT_EQ(any[tag - 1], 100000 + tag) << "tag " << tag;
      }
    }
    EXPECT_EQ(rank.inboxes().tagsHeld(), 0u) << "rank " << rank.rank();
  });
}

// A Recv from any source takes whichever sender's message comes, over
// delayed messages; two of them get both senders, once each.
TEST(Engine, RecvsFromAnySourceGetEachSenderOnce) {
  FabricOptions chosen = options(3);
  chosen.faults.maxDelayMicros = 200;
  chosen.faults.seed = 5;
  auto ranks = makeFabricRanks(chosen);
  onEveryRank(ranks, [&](FabricRank& rank) {
    if (rank.rank() != 0) {
      const std::vector<int32_t> out = numbered(kManySlots, rank.rank() * 1000000);
      EXPECT_EQ(run(rank, rank.send(0, out.data(), out.size(), loomInt32)).result, loomSuccess);
      return;
    }
    std::vector<int32_t> first(kManySlots, -1), second(kManySlots, -1);
    int sources[2] = {-1, -1};
    auto a = post(rank, rank.recv(PostedRecvs::kAnySource, first.data(), kManySlots, loomInt32, 0, &sources[0]));
    auto b = post(rank, rank.recv(PostedRecvs::kAnySource, second.data(), kManySlots, loomInt32, 0, &sources[1]));
    EXPECT_EQ(wait(b).result, loomSuccess);
    EXPECT_EQ(wait(a).result, loomSuccess);
    EXPECT_EQ(sources[0] + sources[1], 3) << sources[0] << " and " << sources[1];
    EXPECT_EQ(first, numbered(kManySlots, sources[0] * 1000000));
    EXPECT_EQ(second, numbered(kManySlots, sources[1] * 1000000));
  });
}

// Each peer's Sends have a lane of their own: one peer that is late to
// receive holds only the Sends to it.
TEST(Engine, ASendToALatePeerDoesNotHoldASendToAnother) {
  auto ranks = makeFabricRanks(options(3));
  std::atomic<bool> rank2Received{false};
  onEveryRank(ranks, [&](FabricRank& rank) {
    std::vector<int32_t> toOne = numbered(kManySlots, 1), toTwo = numbered(kManySlots, 2), in(kManySlots, -1);
    if (rank.rank() == 0) {
      auto first = post(rank, rank.send(1, toOne.data(), kManySlots, loomInt32));
      auto second = post(rank, rank.send(2, toTwo.data(), kManySlots, loomInt32));
      EXPECT_EQ(wait(second).result, loomSuccess);
      EXPECT_EQ(wait(first).result, loomSuccess);
    } else if (rank.rank() == 2) {
      EXPECT_EQ(run(rank, rank.recv(0, in.data(), kManySlots, loomInt32)).result, loomSuccess);
      EXPECT_EQ(in, toTwo);
      rank2Received = true;
    } else {
      // Rank 1 receives only once rank 2 has all of its message: rank 0's
      // Send to 1, posted first, could not have finished meanwhile.
      while (!rank2Received) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      EXPECT_EQ(run(rank, rank.recv(0, in.data(), kManySlots, loomInt32)).result, loomSuccess);
      EXPECT_EQ(in, toOne);
    }
  });
}

// Collectives keep call order on their lane; point-to-point messages are
// not held behind a collective that waits for a peer.
TEST(Engine, ASendOvertakesACollectiveThatWaitsForThePeer) {
  auto ranks = makeFabricRanks(options(2));
  onEveryRank(ranks, [](FabricRank& rank) {
    std::vector<int32_t> mine = numbered(1000, rank.rank()), sum(1000, 0), message = numbered(3000, 7), in(3000, 0);
    if (rank.rank() == 0) {
      auto reduced = post(rank, rank.collective("AllReduce", OperationKind::kAllReduce, allReduce,
                                                allReduceArgs(mine.data(), sum.data(), mine.size())));
      auto sent = post(rank, rank.send(1, message.data(), message.size(), loomInt32));
      EXPECT_EQ(wait(sent).result, loomSuccess);
      EXPECT_EQ(wait(reduced).result, loomSuccess);
    } else {
      // The message arrives while rank 0's AllReduce still waits for this rank.
      EXPECT_EQ(run(rank, rank.recv(0, in.data(), in.size(), loomInt32)).result, loomSuccess);
      EXPECT_EQ(in, message);
      EXPECT_EQ(run(rank, rank.collective("AllReduce", OperationKind::kAllReduce, allReduce,
                                          allReduceArgs(mine.data(), sum.data(), mine.size())))
                    .result,
                loomSuccess);
    }
    for (size_t i = 0; i < sum.size(); ++i) ASSERT_EQ(sum[i], 2 * static_cast<int32_t>(i) + 1) << i;
  });
}

// A group: every Send and Recv among 4 ranks, several messages per pair,
// posted at once and completed in any order.
TEST(Engine, AGroupOfSendsAndRecvsAmongEveryPairCompletes) {
  constexpr int kRanks = 4, kMessages = 5;
  constexpr size_t kCount = 3000;
  auto ranks = makeFabricRanks(options(kRanks));
  onEveryRank(ranks, [&](FabricRank& rank) {
    std::vector<std::vector<int32_t>> out, in;
    std::vector<OperationPtr> group;
    for (int peer = 0; peer < kRanks; ++peer) {
      if (peer == rank.rank()) continue;
      for (int m = 0; m < kMessages; ++m) {
        out.push_back(numbered(kCount, (rank.rank() * 10 + peer) * 100 + m));
        in.emplace_back(kCount, -1);
        group.push_back(rank.recv(peer, in.back().data(), kCount, loomInt32));
        group.push_back(rank.send(peer, out.back().data(), kCount, loomInt32));
      }
    }
    // Buffers stay put: every vector was sized before the first pointer was taken.
    out.reserve(out.size());
    std::vector<std::shared_ptr<Request>> requests;
    for (const OperationPtr& op : group) requests.push_back(requestOf(op));
    rank.engine().post(std::move(group));
    for (auto& request : requests) EXPECT_EQ(wait(request).result, loomSuccess) << wait(request).error;
    size_t at = 0;
    for (int peer = 0; peer < kRanks; ++peer) {
      if (peer == rank.rank()) continue;
      for (int m = 0; m < kMessages; ++m)
        EXPECT_EQ(in[at++], numbered(kCount, (peer * 10 + rank.rank()) * 100 + m)) << rank.rank() << "<-" << peer;
    }
  });
}

TEST(Engine, AWaitThatOutlastsTheTimeoutFailsNamingThePeer) {
  auto ranks = makeFabricRanks(options(2, 300));
  int32_t value = 0;
  const Ended ended = run(*ranks[0], ranks[0]->recv(1, &value, 1, loomInt32));
  EXPECT_EQ(ended.result, loomTimeout);
  EXPECT_NE(ended.error.find("Recv #1 on rank 0 of communicator 'fabric' timed out after 300 ms waiting for rank 1 "
                             "to send data"),
            std::string::npos)
      << ended.error;
}

TEST(Engine, AbortEndsAWaitNamingThePeer) {
  auto ranks = makeFabricRanks(options(2));
  int32_t value = 0;
  auto request = post(*ranks[0], ranks[0]->recv(1, &value, 1, loomInt32));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ranks[0]->abort();
  const Ended ended = wait(request);
  EXPECT_EQ(ended.result, loomAborted);
  EXPECT_NE(ended.error.find("was aborted (loomCommAbort) while waiting for rank 1 to send data"), std::string::npos)
      << ended.error;
}

TEST(Engine, AFailedPeerEndsTheWaitsOnItWithItsSentence) {
  auto ranks = makeFabricRanks(options(2));
  int32_t value = 0;
  std::thread failer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ranks[1]->fabric().fail(1, "rank 1 ran out of memory");
  });
  const Ended ended = run(*ranks[0], ranks[0]->recv(1, &value, 1, loomInt32));
  failer.join();
  EXPECT_EQ(ended.result, loomRemoteError);
  EXPECT_NE(ended.error.find("Recv #1 on rank 0 of communicator 'fabric' failed because rank 1 failed: rank 1 ran "
                             "out of memory"),
            std::string::npos)
      << ended.error;
}

// A schedule that fails on one rank: that rank announces its failure, and
// a rank waiting on it learns why rather than waiting out its timeout.
Task<> failingStep(const Team& /*team*/, const WaitContext& /*wait*/) {
  fail(loomInvalidArgument, "the buffer was too short");
  co_return;
}

TEST(Engine, AFailureOnOneRankReachesARankThatWaitsOnIt) {
  auto ranks = makeFabricRanks(options(2));
  onEveryRank(ranks, [](FabricRank& rank) {
    int32_t value = 0;
    if (rank.rank() == 1) {
      const Ended ended = run(rank, rank.custom("Step", Lane::sendTo(0), failingStep));
      EXPECT_EQ(ended.result, loomInvalidArgument);
      EXPECT_EQ(ended.error, "Step #1 on rank 1 of communicator 'fabric': the buffer was too short");
    } else {
      const Ended ended = run(rank, rank.recv(1, &value, 1, loomInt32));
      EXPECT_EQ(ended.result, loomRemoteError);
      EXPECT_NE(ended.error.find("failed because rank 1 failed: Step #1 on rank 1 of communicator 'fabric': the "
                                 "buffer was too short"),
                std::string::npos)
          << ended.error;
    }
  });
}

TEST(Engine, APeerThatLeavesEndsTheWaitsOnIt) {
  auto ranks = makeFabricRanks(options(2));
  int32_t value = 0;
  std::thread leaver([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ranks[1]->leave();
  });
  const Ended ended = run(*ranks[0], ranks[0]->recv(1, &value, 1, loomInt32));
  leaver.join();
  EXPECT_EQ(ended.result, loomRemoteError);
  EXPECT_NE(
      ended.error.find("failed: rank 1 left the in-memory fabric while this rank was waiting for it to send data"),
      std::string::npos)
      << ended.error;
}

// A rank that posted its message and then left is no failure: what it
// posted arrives, however late.
TEST(Engine, AMessagePostedBeforeItsSenderLeftStillArrives) {
  FabricOptions delayed = options(2);
  delayed.faults.maxDelayMicros = 200000;
  auto ranks = makeFabricRanks(delayed);
  int32_t value = 7, received = 0;
  ASSERT_EQ(run(*ranks[1], ranks[1]->send(0, &value, 1, loomInt32)).result, loomSuccess);
  ranks[1]->leave();
  const Ended ended = run(*ranks[0], ranks[0]->recv(1, &received, 1, loomInt32));
  EXPECT_EQ(ended.result, loomSuccess) << ended.error;
  EXPECT_EQ(received, 7);
}

TEST(Engine, RanksThatCallACollectiveWithDifferentCountsFailNamingBothCalls) {
  auto ranks = makeFabricRanks(options(2));
  onEveryRank(ranks, [](FabricRank& rank) {
    const size_t count = rank.rank() == 0 ? 10 : 12;
    std::vector<int32_t> in(count, 1), out(count, 0);
    const Ended ended = run(rank, rank.collective("AllReduce", OperationKind::kAllReduce, allReduce,
                                                  allReduceArgs(in.data(), out.data(), count)));
    EXPECT_EQ(ended.result, loomInvalidUsage) << ended.error;
    EXPECT_NE(ended.error.find("AllReduce #1 of 10 int32 (sum)"), std::string::npos) << ended.error;
    EXPECT_NE(ended.error.find("AllReduce #1 of 12 int32 (sum)"), std::string::npos) << ended.error;
  });
}

TEST(Engine, AFailedCommunicatorRefusesTheNextOperationSayingWhy) {
  auto ranks = makeFabricRanks(options(2, 200));
  int32_t value = 0;
  EXPECT_EQ(run(*ranks[0], ranks[0]->recv(1, &value, 1, loomInt32)).result, loomTimeout);
  const Ended next = run(*ranks[0], ranks[0]->send(1, &value, 1, loomInt32));
  EXPECT_EQ(next.result, loomInvalidUsage);
  EXPECT_NE(next.error.find("Send #2 on rank 0 of communicator 'fabric' cannot run: this communicator failed earlier "
                            "(Recv #1 on rank 0 of communicator 'fabric' timed out after 200 ms"),
            std::string::npos)
      << next.error;
}

// The sleep/wake contract (transport/idle_sleep.h): a post or a release
// rings the peer's doorbell only while that peer watches the connection,
// so a rank asleep on one peer is not woken by every other's traffic.
TEST(EngineSleep, AConnectionRingsThePeersDoorbellOnlyWhileWatched) {
  auto fabric = std::make_shared<mem::Fabric>(2, SlotShape{2, 4096}, mem::Faults{});
  mem::MemTransport sender(fabric, 0), receiver(fabric, 1);
  SendConnection& out = sender.sendTo(1, Channel::kCollective);
  RecvConnection& in = receiver.recvFrom(0, Channel::kCollective);
  Doorbell& receiverBell = *receiver.doorbell();
  Doorbell& senderBell = *sender.doorbell();
  const MessageLabel label = MessageLabel::pointToPoint(1, 1, loomInt32);

  receiverBell.arm();
  const uint32_t before = receiverBell.rings.load();
  out.labelSlot(out.tryAcquire(), label);
  out.post(4);
  EXPECT_EQ(receiverBell.rings.load(), before) << "rang a receiver that does not watch this connection";
  in.watch(true);
  out.labelSlot(out.tryAcquire(), label);
  out.post(4);
  EXPECT_EQ(receiverBell.rings.load(), before + 1);
  receiverBell.disarm();

  EXPECT_EQ(out.tryAcquire(), nullptr) << "both slots are the receiver's";
  senderBell.arm();
  const uint32_t sendersBefore = senderBell.rings.load();
  ASSERT_NE(in.tryAcquire(), nullptr);
  EXPECT_EQ(in.labelOf(in.tryAcquire()), label);
  EXPECT_EQ(in.acquiredBytes(), 4u);
  in.release();
  EXPECT_EQ(senderBell.rings.load(), sendersBefore);
  out.watch(true);
  ASSERT_NE(in.tryAcquire(), nullptr);
  in.release();
  EXPECT_EQ(senderBell.rings.load(), sendersBefore + 1);
  senderBell.disarm();
  EXPECT_NE(out.tryAcquire(), nullptr);
}

int64_t threadCpuMicros() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
}

// A driver with nothing to do sleeps until the peer's post rings it,
// rather than spinning through the wait.
TEST(EngineSleep, ADriverWaitingOnALatePeerSleepsUntilItsPost) {
  auto ranks = makeFabricRanks(options(2));
  // The peer's 400 ms count from the driver's start: a thread started
  // late on a busy machine would see a shorter wait.
  std::atomic<bool> driverStarted{false};
  onEveryRank(ranks, [&driverStarted](FabricRank& rank) {
    int32_t value = rank.rank() == 1 ? 42 : 0;
    if (rank.rank() == 1) {
      while (!driverStarted.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
      EXPECT_EQ(run(rank, rank.send(0, &value, 1, loomInt32)).result, loomSuccess);
      return;
    }
    const auto start = std::chrono::steady_clock::now();
    driverStarted.store(true);
    const int64_t cpuBefore = threadCpuMicros();
    EXPECT_EQ(run(rank, rank.recv(1, &value, 1, loomInt32)).result, loomSuccess);
    const int64_t cpu = threadCpuMicros() - cpuBefore;
    const int64_t wall =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(value, 42);
    EXPECT_GE(wall, 300000);
    EXPECT_LT(cpu, wall / 2) << "the driver spun through its wait";
  });
}

// Messages that arrive late and out of order across connections (the
// fabric delays each by up to 2 ms): every wake-up still comes, and every
// byte lands where it belongs.
TEST(EngineSleep, DelayedMessagesWakeTheirReceivers) {
  FabricOptions delayed = options(3);
  delayed.faults.maxDelayMicros = 2000;
  delayed.faults.seed = 7;
  auto ranks = makeFabricRanks(delayed);
  onEveryRank(ranks, [](FabricRank& rank) {
    const int next = (rank.rank() + 1) % 3, prev = (rank.rank() + 2) % 3;
    for (int round = 0; round < 30; ++round) {
      std::vector<int32_t> out = numbered(700, rank.rank() * 1000 + round), in(700, -1);
      auto received = post(rank, rank.recv(prev, in.data(), in.size(), loomInt32));
      auto sent = post(rank, rank.send(next, out.data(), out.size(), loomInt32));
      ASSERT_EQ(wait(sent).result, loomSuccess);
      ASSERT_EQ(wait(received).result, loomSuccess);
      ASSERT_EQ(in, numbered(700, prev * 1000 + round)) << "round " << round;
    }
  });
}

// Nobody waits on the posted Recv: the engine's background thread drives it.
TEST(EngineSleep, APostedOperationCompletesWithoutAWaiter) {
  auto ranks = makeFabricRanks(options(2));
  std::vector<int32_t> in(kManySlots, -1), out = numbered(kManySlots, 5);
  auto received = post(*ranks[0], ranks[0]->recv(1, in.data(), in.size(), loomInt32));
  EXPECT_EQ(run(*ranks[1], ranks[1]->send(0, out.data(), out.size(), loomInt32)).result, loomSuccess);
  for (int i = 0; i < 10000 && !received->done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(received->done());
  EXPECT_EQ(received->result(), loomSuccess);
  EXPECT_EQ(in, out);
}

}  // namespace
}  // namespace loom::test

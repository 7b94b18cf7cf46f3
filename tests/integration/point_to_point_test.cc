// Point-to-point as MPI's Isend/Irecv (loom.h, above loomGroupStart): posted
// Sends and Recvs progress whatever order every rank posted them in, the
// messages between one pair match in posting order, and Sends and Recvs in
// flight never hold up the communicator's collectives, nor the other way
// round. Every message's contents are a formula of the sending rank, a
// message number and the element index, checked element by element.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include "support/p2p_messages.h"
#include "support/rank_harness.h"
#include "support/scoped_env.h"

namespace loom::test {
namespace {

bool sendNow(const RankContext& ctx, const Message& m, int peer, int msg) {
  return expectOk(loomSend(m.data(), m.count(), m.dtype(), peer, ctx.comm, nullptr, nullptr), ctx.comm,
                  describe("blocking Send", m, "to", peer, msg, ctx.rank));
}
bool recvNow(const RankContext& ctx, Message& m, int peer, int msg) {
  return expectOk(loomRecv(m.data(), m.count(), m.dtype(), peer, ctx.comm, nullptr, nullptr), ctx.comm,
                  describe("blocking Recv", m, "from", peer, msg, ctx.rank));
}

class PointToPointTest : public ::testing::TestWithParam<std::tuple<RankMode, int>> {
 protected:
  RankMode mode() const { return std::get<0>(GetParam()); }
  int nranks() const { return std::get<1>(GetParam()); }
};

// ---- Posting orders ----------------------------------------------------------

// Every rank posts its Recv before its Send: with blocking, in-order
// execution this deadlocks as soon as a message is larger than the FIFO.
TEST_P(PointToPointTest, RecvThenSendRing) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx);
        int msg = 0;
        for (loomDataType_t dtype : {loomFloat64, loomInt8}) {
          for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, largeCount(dtype, kLargeBytes)}) {
            ++msg;
            Message in = Message::incoming(dtype, count, msg % 3);
            const Message out = Message::outgoing(dtype, count, ctx.rank, msg, (msg + 1) % 3);
            InFlight flight(ctx.comm, ctx.commReleased);
            flight.postRecv(in, prev, msg, ctx.rank);
            flight.postSend(out, next, msg, ctx.rank);
            flight.waitAll();
            if (!flight.ok()) return;  // failed above; the rest would only repeat it
            in.expectFrom(prev, msg, describe("Recv", in, "from", prev, msg, ctx.rank));
          }
        }
      },
      options());
}

// The same with a FIFO of two 4 KiB slots: even 1000 int32 lap it, and a
// 400 KB message laps it about fifty times.
TEST_P(PointToPointTest, RecvThenSendRingThroughATinyFifo) {
  ScopedEnv slotBytes("LOOM_SHM_SLOT_BYTES", "4096");
  ScopedEnv slots("LOOM_SHM_SLOTS", "2");
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx);
        int msg = 0;
        for (size_t count : {size_t{7}, size_t{1000}, size_t{100003}}) {
          ++msg;
          Message in = Message::incoming(loomInt32, count, 1);
          const Message out = Message::outgoing(loomInt32, count, ctx.rank, msg, 2);
          InFlight flight(ctx.comm, ctx.commReleased);
          flight.postRecv(in, prev, msg, ctx.rank);
          flight.postSend(out, next, msg, ctx.rank);
          flight.waitAll();
          if (!flight.ok()) return;  // failed above; the rest would only repeat it
          in.expectFrom(prev, msg, describe("Recv", in, "from", prev, msg, ctx.rank));
        }
      },
      options());
}

// Every rank posts Sends to every other rank, then Recvs from every other
// rank, then waits for all of them, last posted first.
TEST_P(PointToPointTest, SendsToAllPostedBeforeRecvsWaitedInReverseOrder) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        int caseNumber = 0;
        for (loomDataType_t dtype : {loomInt32, loomInt8}) {
          std::vector<size_t> counts = {1, 7, 1000};
          if (dtype == loomInt32) counts.push_back(largeCount(dtype, kLargePairBytes));
          for (size_t count : counts) {
            ++caseNumber;
            // Message number caseNumber * 64 + destination: a message
            // delivered to the wrong rank shows.
            auto msgTo = [&](int dest) { return caseNumber * 64 + dest; };
            std::vector<Message> outs, ins;
            for (int peer = 0; peer < ctx.nranks; ++peer) {
              outs.push_back(Message::outgoing(dtype, count, ctx.rank, msgTo(peer), peer % 3));
              ins.push_back(Message::incoming(dtype, count, (peer + 1) % 3));
            }
            InFlight flight(ctx.comm, ctx.commReleased);
            for (int step = 1; step < ctx.nranks; ++step) {
              const int peer = (ctx.rank + step) % ctx.nranks;
              flight.postSend(outs[peer], peer, msgTo(peer), ctx.rank);
            }
            for (int step = 1; step < ctx.nranks; ++step) {
              const int peer = (ctx.rank + ctx.nranks - step) % ctx.nranks;
              flight.postRecv(ins[peer], peer, msgTo(ctx.rank), ctx.rank);
            }
            flight.waitAllReversed();
            if (!flight.ok()) return;  // failed above; the rest would only repeat it
            for (int peer = 0; peer < ctx.nranks; ++peer)
              if (peer != ctx.rank)
                ins[peer].expectFrom(peer, msgTo(ctx.rank),
                                     describe("Recv", ins[peer], "from", peer, msgTo(ctx.rank), ctx.rank));
          }
        }
      },
      options());
}

// Every rank posts Recvs from all peers first, then its Sends, and waits in
// posting order (so its first wait is on a Recv).
TEST_P(PointToPointTest, EveryRankRecvsFromAllBeforeSending) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        int caseNumber = 0;
        for (size_t count : {size_t{1}, size_t{7}, size_t{1000}, largeCount(loomFloat32, kLargePairBytes)}) {
          ++caseNumber;
          auto msgTo = [&](int dest) { return caseNumber * 64 + dest; };
          std::vector<Message> outs, ins;
          for (int peer = 0; peer < ctx.nranks; ++peer) {
            outs.push_back(Message::outgoing(loomFloat32, count, ctx.rank, msgTo(peer), (peer + 2) % 3));
            ins.push_back(Message::incoming(loomFloat32, count, peer % 3));
          }
          InFlight flight(ctx.comm, ctx.commReleased);
          for (int step = 1; step < ctx.nranks; ++step) {
            const int peer = (ctx.rank + step) % ctx.nranks;
            flight.postRecv(ins[peer], peer, msgTo(ctx.rank), ctx.rank);
          }
          for (int step = 1; step < ctx.nranks; ++step) {
            const int peer = (ctx.rank + ctx.nranks - step) % ctx.nranks;
            flight.postSend(outs[peer], peer, msgTo(peer), ctx.rank);
          }
          flight.waitAll();
          if (!flight.ok()) return;  // failed above; the rest would only repeat it
          for (int peer = 0; peer < ctx.nranks; ++peer)
            if (peer != ctx.rank)
              ins[peer].expectFrom(peer, msgTo(ctx.rank),
                                   describe("Recv", ins[peer], "from", peer, msgTo(ctx.rank), ctx.rank));
        }
      },
      options());
}

// Pairs (0,1), (2,3), ...: the receiver posts ten Recvs at once, the sender
// starts 100 ms later and posts ten Sends of different counts (two of them
// equal, so only the contents tell them apart). Each Recv gets the message
// posted in the same position.
TEST_P(PointToPointTest, SeveralMessagesBetweenOnePairMatchInPostingOrder) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const size_t counts[] = {7, 1, 1000, 0, 65537, 2, largeCount(loomInt32, 1200 * 1024), 13, 1000, 5};
        constexpr int kMessages = sizeof(counts) / sizeof(counts[0]);
        const bool sender = ctx.rank % 2 == 0;
        const int peer = sender ? ctx.rank + 1 : ctx.rank - 1;
        if (peer >= ctx.nranks) return;  // odd one out
        std::vector<Message> messages;
        for (int m = 0; m < kMessages; ++m)
          messages.push_back(sender ? Message::outgoing(loomInt32, counts[m], ctx.rank, m, m % 3)
                                    : Message::incoming(loomInt32, counts[m], m % 3));
        InFlight flight(ctx.comm, ctx.commReleased);
        if (sender) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          for (int m = 0; m < kMessages; ++m) flight.postSend(messages[m], peer, m, ctx.rank);
          flight.waitAll();
          if (!flight.ok()) return;  // failed above; the rest would only repeat it
        } else {
          for (int m = 0; m < kMessages; ++m) flight.postRecv(messages[m], peer, m, ctx.rank);
          flight.waitAllReversed();
          if (!flight.ok()) return;  // failed above; the rest would only repeat it
          for (int m = 0; m < kMessages; ++m)
            messages[m].expectFrom(peer, m, describe("Recv", messages[m], "from", peer, m, ctx.rank));
        }
      },
      options());
}

// Blocking calls with a late peer: the Recv waits 300 ms for its Send, then
// the Send (of several MiB, more than the FIFO holds) waits 300 ms for its
// Recv. Pairs (0,1), (2,3), ...
TEST_P(PointToPointTest, BlockingCallsWaitForALatePeer) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const bool first = ctx.rank % 2 == 0;
        const int peer = first ? ctx.rank + 1 : ctx.rank - 1;
        if (peer >= ctx.nranks) return;
        const auto late = std::chrono::milliseconds(300);
        // 1: the even rank's blocking Recv, the odd rank 300 ms late to send.
        // 2: the even rank's blocking Send, the odd rank 300 ms late to receive.
        const size_t small = 1000, large = largeCount(loomFloat64, kLargeBytes);
        if (first) {
          Message in1 = Message::incoming(loomInt64, small, 1);
          if (!recvNow(ctx, in1, peer, 1)) return;
          in1.expectFrom(peer, 1, describe("Recv", in1, "from", peer, 1, ctx.rank));
          Message in2 = Message::incoming(loomFloat64, large, 2);
          if (!recvNow(ctx, in2, peer, 2)) return;
          in2.expectFrom(peer, 2, describe("Recv", in2, "from", peer, 2, ctx.rank));
          const Message out3 = Message::outgoing(loomFloat64, large, ctx.rank, 3, 1);
          if (!sendNow(ctx, out3, peer, 3)) return;
        } else {
          const Message out1 = Message::outgoing(loomInt64, small, ctx.rank, 1, 0);
          const Message out2 = Message::outgoing(loomFloat64, large, ctx.rank, 2, 0);
          std::this_thread::sleep_for(late);
          if (!sendNow(ctx, out1, peer, 1)) return;
          if (!sendNow(ctx, out2, peer, 2)) return;
          Message in3 = Message::incoming(loomFloat64, large, 0);
          std::this_thread::sleep_for(late);
          if (!recvNow(ctx, in3, peer, 3)) return;
          in3.expectFrom(peer, 3, describe("Recv", in3, "from", peer, 3, ctx.rank));
        }
      },
      options());
}

// A Send's buffer is the caller's again once the Send returns, even while
// its bytes still wait for a late receiver: in a FIFO, in a TCP ring, or
// in the kernel (TCP sends what the socket takes straight from the user's
// buffer and copies only the rest). One buffer, refilled for every message
// of a stream larger than all of those together, so some sends go
// straight out, some in part, some through the ring.
TEST_P(PointToPointTest, SendBufferIsFreeOnceTheSendReturns) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const bool first = ctx.rank % 2 == 0;
        const int peer = first ? ctx.rank + 1 : ctx.rank - 1;
        if (peer >= ctx.nranks) return;
        constexpr int kMessages = 24;
        const size_t count = largeCount(loomInt32, 1 << 20);
        if (first) {
          Message out = Message::outgoing(loomInt32, count, ctx.rank, 0, 1);
          for (int msg = 0; msg < kMessages; ++msg) {
            out.fill(ctx.rank, msg);
            if (!sendNow(ctx, out, peer, msg)) return;
          }
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
          Message in = Message::incoming(loomInt32, count, 3);
          for (int msg = 0; msg < kMessages; ++msg) {
            if (!recvNow(ctx, in, peer, msg)) return;
            in.expectFrom(peer, msg, describe("Recv", in, "from", peer, msg, ctx.rank));
          }
        }
      },
      options());
}

// ---- With collectives --------------------------------------------------------

// A Recv posted before a blocking AllReduce does not hold the AllReduce up
// (its Send is posted only after the AllReduce); then an AllReduce with a
// request and a Recv/Send pair are in flight together and waited in an
// order that differs between ranks.
TEST_P(PointToPointTest, MixedWithCollectives) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx);
        int msg = 0;
        for (size_t count : {size_t{1000}, largeCount(loomFloat64, kLargeBytes)}) {
          for (size_t reduceCount : {size_t{1}, size_t{1000}, size_t{300007}}) {
            ++msg;
            const std::string what = "rank " + std::to_string(ctx.rank) + ", message " + std::to_string(msg);
            const std::vector<int32_t> reduceIn = allReduceInputs(ctx.rank, reduceCount);
            std::vector<int32_t> reduceOut(reduceCount, -1);
            Message in = Message::incoming(loomFloat64, count, msg % 3);
            const Message out = Message::outgoing(loomFloat64, count, ctx.rank, msg, 1);
            InFlight flight(ctx.comm, ctx.commReleased);
            const size_t recv = flight.postRecv(in, prev, msg, ctx.rank);
            if (!expectOk(loomAllReduce(reduceIn.data(), reduceOut.data(), reduceCount, loomInt32, loomSum, ctx.comm,
                                        nullptr, nullptr),
                          ctx.comm, what + ": blocking AllReduce with a Recv pending"))
              return;
            expectAllReduceSum(reduceOut, ctx.nranks, what + ": AllReduce");
            const size_t send = flight.postSend(out, next, msg, ctx.rank);
            flight.wait(send);
            flight.wait(recv);
            if (!flight.ok()) return;  // failed above; the rest would only repeat it
            in.expectFrom(prev, msg, describe("Recv", in, "from", prev, msg, ctx.rank));
          }
        }
        for (size_t count : {size_t{7}, largeCount(loomFloat64, kLargeBytes)}) {
          ++msg;
          const std::string what = "rank " + std::to_string(ctx.rank) + ", message " + std::to_string(msg);
          const size_t reduceCount = 300007;
          const std::vector<int32_t> reduceIn = allReduceInputs(ctx.rank, reduceCount);
          std::vector<int32_t> reduceOut(reduceCount, -1);
          Message in = Message::incoming(loomFloat64, count, 2);
          const Message out = Message::outgoing(loomFloat64, count, ctx.rank, msg, 0);
          InFlight flight(ctx.comm, ctx.commReleased);
          const size_t reduce = flight.post(what + ": AllReduce", [&](loomRequest_t* r) {
            return loomAllReduce(reduceIn.data(), reduceOut.data(), reduceCount, loomInt32, loomSum, ctx.comm, nullptr,
                                 r);
          });
          const size_t recv = flight.postRecv(in, prev, msg, ctx.rank);
          const size_t send = flight.postSend(out, next, msg, ctx.rank);
          const size_t orders[3][3] = {{send, reduce, recv}, {recv, send, reduce}, {reduce, recv, send}};
          for (size_t index : orders[ctx.rank % 3]) flight.wait(index);
          if (!flight.ok()) return;  // failed above; the rest would only repeat it
          expectAllReduceSum(reduceOut, ctx.nranks, what + ": AllReduce");
          in.expectFrom(prev, msg, describe("Recv", in, "from", prev, msg, ctx.rank));
        }
      },
      options());
}

// A Send posted before a blocking AllReduce, whose matching Recv the peer
// posts only after that AllReduce: the pending Send must not hold it up.
TEST_P(PointToPointTest, SendPostedBeforeABlockingCollective) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx);
        int msg = 0;
        for (size_t count : {size_t{1000}, largeCount(loomInt8, kLargeBytes)}) {
          ++msg;
          const std::string what = "rank " + std::to_string(ctx.rank) + ", message " + std::to_string(msg);
          const size_t reduceCount = 300007;
          const std::vector<int32_t> reduceIn = allReduceInputs(ctx.rank, reduceCount);
          std::vector<int32_t> reduceOut(reduceCount, -1);
          Message in = Message::incoming(loomInt8, count, 1);
          const Message out = Message::outgoing(loomInt8, count, ctx.rank, msg, 2);
          InFlight flight(ctx.comm, ctx.commReleased);
          const size_t send = flight.postSend(out, next, msg, ctx.rank);
          if (!expectOk(loomAllReduce(reduceIn.data(), reduceOut.data(), reduceCount, loomInt32, loomSum, ctx.comm,
                                      nullptr, nullptr),
                        ctx.comm, what + ": blocking AllReduce with a Send pending"))
            return;
          expectAllReduceSum(reduceOut, ctx.nranks, what + ": AllReduce");
          const size_t recv = flight.postRecv(in, prev, msg, ctx.rank);
          flight.wait(recv);
          flight.wait(send);
          if (!flight.ok()) return;  // failed above; the rest would only repeat it
          in.expectFrom(prev, msg, describe("Recv", in, "from", prev, msg, ctx.rank));
        }
      },
      options());
}

// The other way round: every rank but the last posts an AllReduce, which
// cannot finish until the last rank joins; the last rank joins only after
// a ring of Sends and Recvs that passes through every rank has finished.
TEST_P(PointToPointTest, CollectiveInFlightDoesNotHoldUpPointToPoint) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx);
        const bool last = ctx.rank == ctx.nranks - 1;
        const std::string what = "rank " + std::to_string(ctx.rank);
        const size_t reduceCount = 300007, count = largeCount(loomFloat32, kLargeBytes);
        const std::vector<int32_t> reduceIn = allReduceInputs(ctx.rank, reduceCount);
        std::vector<int32_t> reduceOut(reduceCount, -1);
        Message in = Message::incoming(loomFloat32, count, 1);
        const Message out = Message::outgoing(loomFloat32, count, ctx.rank, 1, 0);
        InFlight flight(ctx.comm, ctx.commReleased);
        auto postReduce = [&] {
          return flight.post(what + ": AllReduce", [&](loomRequest_t* r) {
            return loomAllReduce(reduceIn.data(), reduceOut.data(), reduceCount, loomInt32, loomSum, ctx.comm, nullptr,
                                 r);
          });
        };
        size_t reduce = 0;
        if (!last) reduce = postReduce();
        const size_t recv = flight.postRecv(in, prev, 1, ctx.rank);
        const size_t send = flight.postSend(out, next, 1, ctx.rank);
        flight.wait(recv);
        flight.wait(send);
        if (!flight.ok()) return;
        in.expectFrom(prev, 1, describe("Recv", in, "from", prev, 1, ctx.rank));
        if (last) reduce = postReduce();
        flight.wait(reduce);
        if (!flight.ok()) return;
        expectAllReduceSum(reduceOut, ctx.nranks, what + ": AllReduce");
      },
      options());
}

// ---- Threads and communicators ---------------------------------------------

// Two communicators over the same ranks (the second from loomCommSplit),
// each driven by its own thread of every rank at the same time: 50 rings of
// Recv-then-Send on each, with counts that vary per iteration.
TEST_P(PointToPointTest, ManyThreadsManyCommunicators) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        loomComm_t split = nullptr;
        const loomResult_t rc = loomCommSplit(ctx.comm, 0, ctx.rank, &split, nullptr);
        ASSERT_EQ(rc, loomSuccess) << "rank " << ctx.rank << ": loomCommSplit: " << loomCommGetLastError(ctx.comm);
        ASSERT_NE(split, nullptr);
        int count = 0, rank = -1;
        expectOk(loomCommCount(split, &count), split, "loomCommCount");
        expectOk(loomCommUserRank(split, &rank), split, "loomCommUserRank");
        EXPECT_EQ(count, ctx.nranks);
        EXPECT_EQ(rank, ctx.rank) << "color 0, key = rank: the split keeps the order";
        bool splitReleased = false;

        auto rings = [&ctx](loomComm_t comm, bool* released, loomDataType_t dtype, int msgBase) {
          const size_t counts[] = {1, 7, 1000, 4099, 0, 33, 20011};
          const int next = nextOf(ctx), prev = prevOf(ctx);
          for (int iter = 0; iter < 50; ++iter) {
            const int msg = msgBase + iter;
            // Every tenth iteration laps the FIFO.
            const size_t n = iter % 10 == 9 ? largeCount(dtype, 1200 * 1024) : counts[iter % 7];
            Message in = Message::incoming(dtype, n, iter % 3);
            const Message out = Message::outgoing(dtype, n, ctx.rank, msg, (iter + 1) % 3);
            InFlight flight(comm, released);
            flight.postRecv(in, prev, msg, ctx.rank);
            flight.postSend(out, next, msg, ctx.rank);
            flight.waitAll();
            if (!flight.ok()) return;  // failed above; the rest would only repeat it
            in.expectFrom(prev, msg, describe("Recv", in, "from", prev, msg, ctx.rank));
          }
        };
        std::thread first(rings, ctx.comm, ctx.commReleased, loomInt32, 0);
        std::thread second(rings, split, &splitReleased, loomFloat64, 1000);
        first.join();
        second.join();
        if (!splitReleased) expectOk(loomCommDestroy(split), split, "loomCommDestroy of the split communicator");
      },
      options());
}

// ---- Edge cases and patterns -------------------------------------------------

// Zero-count messages complete, with requests and blocking, and take their
// place in the posting order between non-empty ones.
TEST_P(PointToPointTest, ZeroCountSendRecvCompletes) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx);
        {
          Message in = Message::incoming(loomFloat32, 0);
          const Message out = Message::outgoing(loomFloat32, 0, ctx.rank, 1);
          InFlight flight(ctx.comm, ctx.commReleased);
          flight.postRecv(in, prev, 1, ctx.rank);
          flight.postSend(out, next, 1, ctx.rank);
          flight.waitAll();
          if (!flight.ok()) return;  // failed above; the rest would only repeat it
          in.expectFrom(prev, 1, "zero-count Recv with a request");
        }
        {
          // Blocking: even ranks send first, odd ranks receive first (a ring
          // of blocking Recvs first would wait forever under any semantics).
          Message in = Message::incoming(loomInt8, 0);
          const Message out = Message::outgoing(loomInt8, 0, ctx.rank, 2);
          if (ctx.rank % 2 == 0) {
            if (!sendNow(ctx, out, next, 2)) return;
            if (!recvNow(ctx, in, prev, 2)) return;
          } else {
            if (!recvNow(ctx, in, prev, 2)) return;
            if (!sendNow(ctx, out, next, 2)) return;
          }
          in.expectFrom(prev, 2, "blocking zero-count Recv");
        }
        {
          // 5, 0, 5 and 0 elements: the two non-empty ones arrive in order.
          const size_t counts[] = {5, 0, 5, 0};
          std::vector<Message> ins, outs;
          for (int m = 0; m < 4; ++m) {
            ins.push_back(Message::incoming(loomInt32, counts[m], m % 3));
            outs.push_back(Message::outgoing(loomInt32, counts[m], ctx.rank, 10 + m));
          }
          InFlight flight(ctx.comm, ctx.commReleased);
          for (int m = 0; m < 4; ++m) flight.postRecv(ins[m], prev, 10 + m, ctx.rank);
          for (int m = 0; m < 4; ++m) flight.postSend(outs[m], next, 10 + m, ctx.rank);
          flight.waitAllReversed();
          if (!flight.ok()) return;  // failed above; the rest would only repeat it
          for (int m = 0; m < 4; ++m)
            ins[m].expectFrom(prev, 10 + m, describe("Recv", ins[m], "from", prev, 10 + m, ctx.rank));
        }
      },
      options());
}

// Pipeline parallelism: rank r receives microbatch b from r - 1, adds 1 to
// every element and sends it to r + 1. Every rank posts all 20 Recvs first;
// then, microbatch by microbatch, waits for its Recv and posts its Send, so
// up to 20 Sends are in flight at once. Rank r must receive base + r.
TEST_P(PointToPointTest, PipelinePattern) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        constexpr int kMicrobatches = 20;
        auto countOf = [](int b) { return b == 11 ? size_t{300007} : size_t{1000} + 513 * b; };
        auto base = [](int b, size_t i) { return static_cast<int32_t>(b * 100000 + i % 1009); };
        const bool first = ctx.rank == 0, last = ctx.rank == ctx.nranks - 1;
        std::vector<std::vector<int32_t>> buffers;
        for (int b = 0; b < kMicrobatches; ++b) buffers.emplace_back(countOf(b), first ? 0 : -7);
        if (first)
          for (int b = 0; b < kMicrobatches; ++b)
            for (size_t i = 0; i < buffers[b].size(); ++i) buffers[b][i] = base(b, i);
        InFlight flight(ctx.comm, ctx.commReleased);
        auto what = [&](const char* op, int b) {
          return "rank " + std::to_string(ctx.rank) + ": " + op + " of microbatch " + std::to_string(b);
        };
        std::vector<size_t> recvs(kMicrobatches), sends;
        if (!first)
          for (int b = 0; b < kMicrobatches; ++b)
            recvs[b] = flight.post(what("Recv", b), [&](loomRequest_t* r) {
              return loomRecv(buffers[b].data(), buffers[b].size(), loomInt32, ctx.rank - 1, ctx.comm, nullptr, r);
            });
        for (int b = 0; b < kMicrobatches; ++b) {
          std::vector<int32_t>& data = buffers[b];
          if (!first) {
            flight.wait(recvs[b]);
            if (!flight.ok()) return;  // failed above; the rest would only repeat it
            for (size_t i = 0; i < data.size(); ++i) {
              if (data[i] != base(b, i) + ctx.rank) {
                ADD_FAILURE() << what("Recv", b) << ": element " << i << " of " << data.size() << " is " << data[i]
                              << ", expected " << base(b, i) + ctx.rank;
                break;
              }
            }
          }
          if (last) continue;
          for (int32_t& v : data) v += 1;
          sends.push_back(flight.post(what("Send", b), [&](loomRequest_t* r) {
            return loomSend(data.data(), data.size(), loomInt32, ctx.rank + 1, ctx.comm, nullptr, r);
          }));
        }
        for (size_t send : sends) flight.wait(send);
      },
      options());
}

INSTANTIATE_TEST_SUITE_P(Ranks, PointToPointTest,
                         ::testing::Combine(::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                                            ::testing::Values(2, 3, 5, 8)),
                         [](const auto& info) {
                           return modeName(std::get<0>(info.param)) + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace loom::test

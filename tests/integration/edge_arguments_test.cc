// Every entry point of loom.h at the edges of its arguments: count 0 and 1,
// NULL wherever the header allows it, in place, and buffers at odd
// addresses; blocking, with a request and inside a group; at 2 and 3 ranks,
// as threads and as processes, over shared memory (and over TCP: the tcp/
// entries of tests/CMakeLists.txt). Zero-count calls behave as NCCL and MPI
// specify: they complete, match their partner, and later messages keep
// their numbers. Results are checked against tests/support/reference.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "support/buffers.h"
#include "support/p2p_messages.h"
#include "support/rank_harness.h"
#include "support/reference.h"

namespace loom::test {
namespace {

class EdgeArgumentsTest : public ::testing::TestWithParam<std::tuple<RankMode, int>> {
 protected:
  RankMode mode() const { return std::get<0>(GetParam()); }
  int nranks() const { return std::get<1>(GetParam()); }
};

// ---- Empty point-to-point messages -------------------------------------------

// How a rank issues its two Recvs (from prev) and two Sends (to next).
enum class Posting {
  kBlockingSendsFirst,  // small messages: a blocking Send finishes before its Recv is posted
  kBlockingRecvsFirstOnOddRanks,
  kRequestsRecvsFirst,
  kRequestsSendsFirstWaitedReversed,
  kGroupOfBlockingCalls,
  kGroupOfPostedCalls,
  kInterleaved,  // posted Recv, blocking Send, posted Recv, blocking Send
};
const Posting kPostings[] = {Posting::kBlockingSendsFirst,   Posting::kBlockingRecvsFirstOnOddRanks,
                             Posting::kRequestsRecvsFirst,   Posting::kRequestsSendsFirstWaitedReversed,
                             Posting::kGroupOfBlockingCalls, Posting::kGroupOfPostedCalls,
                             Posting::kInterleaved};

const char* postingName(Posting p) {
  switch (p) {
    case Posting::kBlockingSendsFirst: return "blocking, Sends first";
    case Posting::kBlockingRecvsFirstOnOddRanks: return "blocking, Recvs first on odd ranks";
    case Posting::kRequestsRecvsFirst: return "requests, Recvs first";
    case Posting::kRequestsSendsFirstWaitedReversed: return "requests, Sends first, waited in reverse";
    case Posting::kGroupOfBlockingCalls: return "blocking calls in a group";
    case Posting::kGroupOfPostedCalls: return "calls with requests in a group, Sends first";
    case Posting::kInterleaved: return "posted Recv, blocking Send, twice";
  }
  return "?";
}

// A message whose buffer may be NULL: `count` elements, or NULL when the
// count is 0 and `null` says so.
struct PairMessage {
  Message buffer;
  bool null;
  void* data() { return null ? nullptr : buffer.data(); }
  const void* data() const { return null ? nullptr : buffer.data(); }
  size_t count() const { return buffer.count(); }
  loomDataType_t dtype() const { return buffer.dtype(); }
};

// Sends `outs` to next and receives `ins` from prev, posted as `posting` says.
void exchangeWithNeighbours(const RankContext& ctx, Posting posting, std::vector<PairMessage>& ins,
                            const std::vector<PairMessage>& outs, const std::string& what) {
  const int next = nextOf(ctx), prev = prevOf(ctx);
  auto send = [&](size_t m, loomRequest_t* r) {
    return loomSend(outs[m].data(), outs[m].count(), outs[m].dtype(), next, ctx.comm, nullptr, r);
  };
  auto recv = [&](size_t m, loomRequest_t* r) {
    return loomRecv(ins[m].data(), ins[m].count(), ins[m].dtype(), prev, ctx.comm, nullptr, r);
  };
  auto sendNow = [&](size_t m) { return expectOk(send(m, nullptr), ctx.comm, what + ": blocking Send"); };
  auto recvNow = [&](size_t m) { return expectOk(recv(m, nullptr), ctx.comm, what + ": blocking Recv"); };
  const size_t n = outs.size();
  switch (posting) {
    case Posting::kBlockingSendsFirst:
      for (size_t m = 0; m < n; ++m) sendNow(m);
      for (size_t m = 0; m < n; ++m) recvNow(m);
      return;
    case Posting::kBlockingRecvsFirstOnOddRanks:
      if (ctx.rank % 2 == 0)
        for (size_t m = 0; m < n; ++m) sendNow(m);
      for (size_t m = 0; m < n; ++m) recvNow(m);
      if (ctx.rank % 2 == 1)
        for (size_t m = 0; m < n; ++m) sendNow(m);
      return;
    case Posting::kRequestsRecvsFirst:
    case Posting::kRequestsSendsFirstWaitedReversed: {
      InFlight flight(ctx.comm, ctx.commReleased);
      const bool recvsFirst = posting == Posting::kRequestsRecvsFirst;
      for (int side = 0; side < 2; ++side) {
        const bool posRecvs = (side == 0) == recvsFirst;
        for (size_t m = 0; m < n; ++m) {
          if (posRecvs)
            flight.post(what + ": Recv " + std::to_string(m), [&](loomRequest_t* r) { return recv(m, r); });
          else
            flight.post(what + ": Send " + std::to_string(m), [&](loomRequest_t* r) { return send(m, r); });
        }
      }
      if (recvsFirst)
        flight.waitAll();
      else
        flight.waitAllReversed();
      return;
    }
    case Posting::kGroupOfBlockingCalls:
      expectOk(loomGroupStart(), ctx.comm, what + ": loomGroupStart");
      for (size_t m = 0; m < n; ++m) recvNow(m);
      for (size_t m = 0; m < n; ++m) sendNow(m);
      EXPECT_EQ(loomGroupEnd(), loomSuccess) << what << ": loomGroupEnd: " << loomGetLastError();
      return;
    case Posting::kGroupOfPostedCalls: {
      InFlight flight(ctx.comm, ctx.commReleased);
      expectOk(loomGroupStart(), ctx.comm, what + ": loomGroupStart");
      for (size_t m = 0; m < n; ++m)
        flight.post(what + ": Send " + std::to_string(m), [&](loomRequest_t* r) { return send(m, r); });
      for (size_t m = 0; m < n; ++m)
        flight.post(what + ": Recv " + std::to_string(m), [&](loomRequest_t* r) { return recv(m, r); });
      EXPECT_EQ(loomGroupEnd(), loomSuccess) << what << ": loomGroupEnd: " << loomGetLastError();
      flight.waitAll();
      return;
    }
    case Posting::kInterleaved: {
      InFlight flight(ctx.comm, ctx.commReleased);
      for (size_t m = 0; m < n; ++m) {
        flight.post(what + ": Recv " + std::to_string(m), [&](loomRequest_t* r) { return recv(m, r); });
        sendNow(m);
      }
      flight.waitAll();
      return;
    }
  }
}

// An empty Send with a NULL buffer, then a message of 4: the Recvs get the
// empty one and then the 4 elements, whatever the posting order. Then the
// same with the empty message last, and with a non-NULL empty buffer.
TEST_P(EdgeArgumentsTest, EmptySendWithNullBufferThenAMessageAtEveryPostingOrder) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int prev = prevOf(ctx);
        int msg = 0;
        for (Posting posting : kPostings) {
          // {count, NULL buffer} of each message, in posting order.
          const std::vector<std::vector<std::pair<size_t, bool>>> shapes = {
              {{0, true}, {4, false}}, {{4, false}, {0, true}}, {{0, false}, {4, false}}, {{0, true}, {0, true}}};
          for (const auto& shape : shapes) {
            std::vector<PairMessage> ins, outs;
            for (const auto& [count, null] : shape) {
              ++msg;
              ins.push_back({Message::incoming(loomInt32, count, 1), null});
              outs.push_back({Message::outgoing(loomInt32, count, ctx.rank, msg, 3), null});
            }
            const std::string what = std::string("rank ") + std::to_string(ctx.rank) + ", " + postingName(posting) +
                                     ", messages " + std::to_string(msg - 1) + " and " + std::to_string(msg);
            exchangeWithNeighbours(ctx, posting, ins, outs, what);
            if (::testing::Test::HasFailure()) return;  // the rest would only repeat it
            for (size_t m = 0; m < ins.size(); ++m) ins[m].buffer.expectFrom(prev, msg - 1 + static_cast<int>(m), what);
          }
        }
      },
      options());
}

// Each rank posts two Recvs, then makes an empty blocking Send with a NULL
// buffer and a blocking Send of 4, then a Barrier, and only then waits for
// its Recvs: the empty Send must not queue behind this rank's own Recvs.
TEST_P(EdgeArgumentsTest, EmptySendDoesNotWaitBehindThisRanksPendingRecvs) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int next = nextOf(ctx), prev = prevOf(ctx);
        Message empty = Message::incoming(loomFloat64, 0);
        Message in = Message::incoming(loomFloat64, 4, 5);
        const Message out = Message::outgoing(loomFloat64, 4, ctx.rank, 2, 7);
        InFlight flight(ctx.comm, ctx.commReleased);
        flight.post("Recv of 0 into NULL",
                    [&](loomRequest_t* r) { return loomRecv(nullptr, 0, loomFloat64, prev, ctx.comm, nullptr, r); });
        flight.postRecv(in, prev, 2, ctx.rank);
        if (!expectOk(loomSend(nullptr, 0, loomFloat64, next, ctx.comm, nullptr, nullptr), ctx.comm,
                      "blocking Send of 0 from NULL"))
          return;
        if (!expectOk(loomSend(out.data(), 4, loomFloat64, next, ctx.comm, nullptr, nullptr), ctx.comm,
                      "blocking Send of 4"))
          return;
        if (!expectOk(loomBarrier(ctx.comm, nullptr), ctx.comm, "Barrier")) return;
        flight.waitAll();
        if (flight.ok()) in.expectFrom(prev, 2, "Recv of 4 after the empty one");
      },
      options());
}

// An empty message is a message: a Recv of 4 matched with an empty Send, or
// an empty Recv matched with a Send of 4, fails naming both counts, as
// any other count that differs.
TEST_P(EdgeArgumentsTest, EmptyMessageMatchedWithANonEmptyOneIsNamed) {
  for (bool emptySend : {true, false}) {
    runRanks(
        mode(), nranks(),
        [emptySend](const RankContext& ctx) {
          int32_t data[4] = {1, 2, 3, 4};
          const size_t sent = emptySend ? 0 : 4, expected = emptySend ? 4 : 0;
          if (ctx.rank == 0) {
            const loomResult_t rc =
                loomSend(emptySend ? nullptr : data, sent, loomInt32, 1, ctx.comm, nullptr, nullptr);
            EXPECT_EQ(rc, loomSuccess) << loomCommGetLastError(ctx.comm);
          } else if (ctx.rank == 1) {
            const loomResult_t rc =
                loomRecv(emptySend ? data : nullptr, expected, loomInt32, 0, ctx.comm, nullptr, nullptr);
            EXPECT_EQ(rc, loomInvalidUsage) << loomCommGetLastError(ctx.comm);
            const std::string sentence = loomCommGetLastError(ctx.comm);
            const std::string named = "message #1 from rank 0 is a Send of " + std::to_string(sent) +
                                      " int32, but this Recv expects " + std::to_string(expected) + " int32";
            EXPECT_NE(sentence.find(named), std::string::npos) << sentence;
          }
          // The failure reaches every rank: none passes the next call.
          EXPECT_NE(loomBarrier(ctx.comm, nullptr), loomSuccess) << "rank " << ctx.rank;
        },
        options());
  }
}

// ---- Every collective at count 0 -----------------------------------------------

// One entry point called with `count` elements; send and recv may be NULL.
struct EdgeCall {
  const char* name;
  std::function<loomResult_t(const RankContext&, const void* send, void* recv, size_t count, loomRequest_t*)> call;
};

std::vector<EdgeCall> everyEdgeCall(int root) {
  return {
      {"AllReduce", [](const RankContext& c, const void* s, void* r, size_t n,
                       loomRequest_t* q) { return loomAllReduce(s, r, n, loomFloat32, loomAvg, c.comm, nullptr, q); }},
      {"AllGather", [](const RankContext& c, const void* s, void* r, size_t n,
                       loomRequest_t* q) { return loomAllGather(s, r, n, loomFloat32, c.comm, nullptr, q); }},
      {"ReduceScatter",
       [](const RankContext& c, const void* s, void* r, size_t n, loomRequest_t* q) {
         return loomReduceScatter(s, r, n, loomFloat32, loomMax, c.comm, nullptr, q);
       }},
      {"Broadcast", [root](const RankContext& c, const void* s, void* r, size_t n,
                           loomRequest_t* q) { return loomBroadcast(s, r, n, loomFloat32, root, c.comm, nullptr, q); }},
      {"Reduce",
       [root](const RankContext& c, const void* s, void* r, size_t n, loomRequest_t* q) {
         return loomReduce(s, r, n, loomFloat32, loomProd, root, c.comm, nullptr, q);
       }},
      {"AllToAll", [](const RankContext& c, const void* s, void* r, size_t n,
                      loomRequest_t* q) { return loomAllToAll(s, r, n, loomFloat32, c.comm, nullptr, q); }},
      {"Barrier",
       [](const RankContext& c, const void*, void*, size_t, loomRequest_t* q) { return loomBarrier(c.comm, q); }},
  };
}

enum class IssueMode { kBlocking, kRequest, kGroupedBlocking, kGroupedRequest };
const IssueMode kIssueModes[] = {IssueMode::kBlocking, IssueMode::kRequest, IssueMode::kGroupedBlocking,
                                 IssueMode::kGroupedRequest};
const char* issueModeName(IssueMode i) {
  switch (i) {
    case IssueMode::kBlocking: return "blocking";
    case IssueMode::kRequest: return "with a request";
    case IssueMode::kGroupedBlocking: return "blocking in a group";
    case IssueMode::kGroupedRequest: return "with a request in a group";
  }
  return "?";
}

// Calls `entry` as `issue` says and expects it to complete.
void callAndComplete(const RankContext& ctx, const EdgeCall& entry, IssueMode issue, const void* send, void* recv,
                     size_t count, const std::string& what) {
  const bool grouped = issue == IssueMode::kGroupedBlocking || issue == IssueMode::kGroupedRequest;
  const bool request = issue == IssueMode::kRequest || issue == IssueMode::kGroupedRequest;
  if (grouped) expectOk(loomGroupStart(), ctx.comm, what + ": loomGroupStart");
  loomRequest_t handle = nullptr;
  expectOk(entry.call(ctx, send, recv, count, request ? &handle : nullptr), ctx.comm, what);
  if (grouped) {
    EXPECT_EQ(loomGroupEnd(), loomSuccess) << what << ": loomGroupEnd: " << loomGetLastError();
  }
  if (handle != nullptr) {
    expectOk(loomWait(handle, -1), ctx.comm, what + ": loomWait");
    loomRequestFree(handle);
  }
}

// Every collective with count 0, NULL or real (odd) buffers, issued every
// way: each completes, writes nothing, and the AllReduce and Send/Recv
// after them still match (the collectives and messages stay numbered alike
// on every rank).
TEST_P(EdgeArgumentsTest, EveryCallWithCountZeroCompletesAndKeepsLaterCallsInStep) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int root = ctx.nranks - 1;
        int msg = 0;
        for (const EdgeCall& entry : everyEdgeCall(root)) {
          for (IssueMode issue : kIssueModes) {
            for (bool null : {true, false}) {
              Buffer send(size_t{0}, 1), recv(size_t{0}, 3);  // each one guard byte of 0xEE past an odd address
              const std::string what = std::string("rank ") + std::to_string(ctx.rank) + ": " + entry.name + " of 0 " +
                                       issueModeName(issue) + (null ? ", NULL buffers" : ", odd buffers");
              callAndComplete(ctx, entry, issue, null ? nullptr : send.data(), null ? nullptr : recv.data(), 0, what);
              EXPECT_EQ(send.data()[0], 0xEE) << what << ": wrote past its empty send buffer";
              EXPECT_EQ(recv.data()[0], 0xEE) << what << ": wrote past its empty receive buffer";
              if (::testing::Test::HasFailure()) return;
            }
          }
          // In step: an AllReduce of 3 and a message to the next rank.
          const std::string after = std::string("rank ") + std::to_string(ctx.rank) + ", after " + entry.name;
          std::vector<int32_t> out(3);
          const std::vector<int32_t> in = allReduceInputs(ctx.rank, 3);
          expectOk(loomAllReduce(in.data(), out.data(), 3, loomInt32, loomSum, ctx.comm, nullptr, nullptr), ctx.comm,
                   after + ": AllReduce of 3");
          expectAllReduceSum(out, ctx.nranks, after + ": AllReduce of 3");
          ++msg;
          std::vector<PairMessage> ins, outs;
          ins.push_back({Message::incoming(loomInt32, 0), true});
          ins.push_back({Message::incoming(loomInt32, 2, 1), false});
          outs.push_back({Message::outgoing(loomInt32, 0, ctx.rank, msg), true});
          outs.push_back({Message::outgoing(loomInt32, 2, ctx.rank, msg + 1, 1), false});
          exchangeWithNeighbours(ctx, Posting::kRequestsRecvsFirst, ins, outs, after + ": Send/Recv of 0 and 2");
          ins[1].buffer.expectFrom(prevOf(ctx), msg + 1, after + ": Recv of 2");
          ++msg;
          if (::testing::Test::HasFailure()) return;
        }
      },
      options());
}

// ---- Every collective at count 1 -----------------------------------------------

// Count 1, out of place and in place, at odd addresses, with NULL where only
// the root reads or writes a buffer (Broadcast's sendbuf, Reduce's recvbuf),
// every rank as root; checked against the reference.
TEST_P(EdgeArgumentsTest, EveryCollectiveWithCountOneAtOddAddresses) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const int n = ctx.nranks, rank = ctx.rank;
        const std::string on = " on rank " + std::to_string(rank);
        const size_t misaligns[] = {1, 3, 6};
        for (loomDataType_t dtype : {loomFloat16, loomInt64, loomInt8}) {
          const size_t size = loomTypeSize(dtype);
          const std::string type = std::string(" of 1 ") + loomTypeName(dtype);
          for (bool inPlace : {false, true}) {
            const std::string place = inPlace ? ", in place" : ", out of place";
            for (size_t misalign : misaligns) {
              {  // AllReduce
                ReductionReference reference(dtype, loomMin, n);
                Buffer send(makeInput(dtype, loomMin, rank, 0, 1), misalign), recv(size, misalign + 1);
                unsigned char* out = inPlace ? send.data() : recv.data();
                const std::string what = "AllReduce" + type + place + on;
                expectOk(loomAllReduce(send.data(), out, 1, dtype, loomMin, ctx.comm, nullptr, nullptr), ctx.comm,
                         what);
                EXPECT_EQ(firstMismatch(reference.expected(0, 1), out, size), -1) << what;
              }
              {  // AllGather: in place, this rank's block already sits in recvbuf.
                Buffer recv(n * size, misalign);
                Buffer send(makeInput(dtype, loomSum, rank, 0, 1, true), misalign + 2);
                const void* in = send.data();
                if (inPlace) {
                  std::memcpy(recv.data() + rank * size, send.data(), size);
                  in = recv.data() + rank * size;
                }
                const std::string what = "AllGather" + type + place + on;
                expectOk(loomAllGather(in, recv.data(), 1, dtype, ctx.comm, nullptr, nullptr), ctx.comm, what);
                for (int q = 0; q < n; ++q)
                  EXPECT_EQ(firstMismatch(makeInput(dtype, loomSum, q, 0, 1, true), recv.data() + q * size, size), -1)
                      << what << ", block of rank " << q;
              }
              {  // ReduceScatter: in place, recvbuf is this rank's block of sendbuf.
                ReductionReference reference(dtype, loomSum, n);
                Buffer send(makeInput(dtype, loomSum, rank, 0, n), misalign), recv(size, misalign + 1);
                unsigned char* out = inPlace ? send.data() + rank * size : recv.data();
                const std::string what = "ReduceScatter" + type + place + on;
                expectOk(loomReduceScatter(send.data(), out, 1, dtype, loomSum, ctx.comm, nullptr, nullptr), ctx.comm,
                         what);
                EXPECT_EQ(firstMismatch(reference.expected(rank, 1), out, size), -1) << what;
              }
              {  // AllToAll
                Buffer send(makeInput(dtype, loomSum, rank, 0, n, true), misalign), recv(n * size, misalign + 1);
                unsigned char* out = inPlace ? send.data() : recv.data();
                const std::string what = "AllToAll" + type + place + on;
                expectOk(loomAllToAll(send.data(), out, 1, dtype, ctx.comm, nullptr, nullptr), ctx.comm, what);
                for (int q = 0; q < n; ++q)
                  EXPECT_EQ(firstMismatch(makeInput(dtype, loomSum, q, rank, 1, true), out + q * size, size), -1)
                      << what << ", block from rank " << q;
              }
              for (int root = 0; root < n; ++root) {
                const std::string rooted = " (root " + std::to_string(root) + ")" + on;
                {  // Broadcast: off the root, sendbuf is NULL.
                  Buffer send(makeInput(dtype, loomSum, rank, 0, 1, true), misalign), recv(size, misalign + 1);
                  const void* in = rank == root ? send.data() : nullptr;
                  unsigned char* out = inPlace && rank == root ? send.data() : recv.data();
                  const std::string what = "Broadcast" + type + place + rooted;
                  expectOk(loomBroadcast(in, out, 1, dtype, root, ctx.comm, nullptr, nullptr), ctx.comm, what);
                  EXPECT_EQ(firstMismatch(makeInput(dtype, loomSum, root, 0, 1, true), out, size), -1) << what;
                }
                {  // Reduce: off the root, recvbuf is NULL.
                  ReductionReference reference(dtype, loomMax, n);
                  Buffer send(makeInput(dtype, loomMax, rank, 0, 1), misalign), recv(size, misalign + 1);
                  unsigned char* out = rank != root ? nullptr : inPlace ? send.data() : recv.data();
                  const std::string what = "Reduce" + type + place + rooted;
                  expectOk(loomReduce(send.data(), out, 1, dtype, loomMax, root, ctx.comm, nullptr, nullptr), ctx.comm,
                           what);
                  if (rank == root) {
                    EXPECT_EQ(firstMismatch(reference.expected(0, 1), out, size), -1) << what;
                  }
                }
              }
              if (::testing::Test::HasFailure()) return;
            }
          }
        }
      },
      options());
}

INSTANTIATE_TEST_SUITE_P(Ranks, EdgeArgumentsTest,
                         ::testing::Combine(::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                                            ::testing::Values(2, 3)),
                         [](const auto& info) {
                           return modeName(std::get<0>(info.param)) + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace loom::test

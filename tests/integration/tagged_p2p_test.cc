// Tagged point-to-point (loomSendTagged, loomRecvTagged) as MPI's tag
// matching: messages of one tag between a pair match in posting order,
// Recvs of different tags complete in whatever order the receiver asks for
// them, whatever order the sender sent them in, and a message nobody has
// asked for yet waits in the receiver's inbox without holding up the
// others. Contents are a formula of the sender, a message number and the
// element index, checked element by element.
#include <gtest/gtest.h>
#include <loom/loom.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/p2p_messages.h"
#include "support/rank_harness.h"

namespace loom::test {
namespace {

class TaggedPointToPointTest : public ::testing::TestWithParam<std::tuple<RankMode, int>> {
 protected:
  RankMode mode() const { return std::get<0>(GetParam()); }
  int nranks() const { return std::get<1>(GetParam()); }
};

std::string tagged(const std::string& what, int tag) {
  return what + " with tag " + std::to_string(tag);
}

size_t postSendTagged(InFlight& flight, const Message& m, int peer, int tag, int msg, int rank) {
  return flight.post(tagged(describe("Send", m, "to", peer, msg, rank), tag), [&](loomRequest_t* r) {
    return loomSendTagged(m.data(), m.count(), m.dtype(), peer, tag, flight.comm(), nullptr, r);
  });
}

size_t postRecvTagged(InFlight& flight, Message& m, int peer, int tag, int msg, int rank) {
  return flight.post(tagged(describe("Recv", m, "from", peer, msg, rank), tag), [&](loomRequest_t* r) {
    return loomRecvTagged(m.data(), m.count(), m.dtype(), peer, tag, flight.comm(), nullptr, r);
  });
}

// Pairs (0,1), (2,3), ...: the sender posts one message per tag, tags 4, 1,
// 3, 0, 2 in that order (the first larger than every FIFO, so it spans many
// slots); the receiver, with blocking calls, asks for tags 2, 0, 3, 1, 4.
// Each of its Recvs finds the messages sent before its own at the head of
// the FIFO and must set them aside; without tag matching the first
// blocking Recv would wait for ever behind tag 4.
TEST_P(TaggedPointToPointTest, BlockingRecvsTakeTheirTagWhateverOrderItWasSentIn) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const bool sender = ctx.rank % 2 == 0;
        const int peer = sender ? ctx.rank + 1 : ctx.rank - 1;
        if (peer >= ctx.nranks) return;
        const int sendOrder[] = {4, 1, 3, 0, 2};
        const int recvOrder[] = {2, 0, 3, 1, 4};
        auto countOf = [](int tag) { return tag == 4 ? largeCount(loomFloat64, kLargeBytes) : size_t(3 + 250 * tag); };
        if (sender) {
          std::vector<Message> out;
          for (int tag : sendOrder) out.push_back(Message::outgoing(loomFloat64, countOf(tag), ctx.rank, tag, tag % 3));
          InFlight flight(ctx.comm, ctx.commReleased);
          for (size_t i = 0; i < out.size(); ++i)
            postSendTagged(flight, out[i], peer, sendOrder[i], sendOrder[i], ctx.rank);
          flight.waitAll();
          return;
        }
        for (int tag : recvOrder) {
          Message in = Message::incoming(loomFloat64, countOf(tag), tag % 3);
          const std::string what = tagged(describe("blocking Recv", in, "from", peer, tag, ctx.rank), tag);
          if (!expectOk(loomRecvTagged(in.data(), in.count(), in.dtype(), peer, tag, ctx.comm, nullptr, nullptr),
                        ctx.comm, what))
            return;
          in.expectFrom(peer, tag, what);
        }
      },
      options());
}

// Messages of one tag keep their order: the sender alternates tags 5 and 9
// (three each, counts that differ, two equal); the receiver posts the three
// Recvs of tag 9, then those of tag 5, and waits for them last to first.
// The i-th Recv of a tag gets the i-th Send of that tag.
TEST_P(TaggedPointToPointTest, MessagesOfOneTagMatchInPostingOrder) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const bool sender = ctx.rank % 2 == 0;
        const int peer = sender ? ctx.rank + 1 : ctx.rank - 1;
        if (peer >= ctx.nranks) return;
        constexpr int kPerTag = 3;
        const size_t counts[kPerTag] = {7, 70000, 7};
        auto msgOf = [](int tag, int i) { return tag * 10 + i; };
        if (sender) {
          std::vector<Message> out;
          std::vector<int> tags;
          for (int i = 0; i < kPerTag; ++i)
            for (int tag : {5, 9}) {
              out.push_back(Message::outgoing(loomInt32, counts[i], ctx.rank, msgOf(tag, i), i));
              tags.push_back(tag);
            }
          InFlight flight(ctx.comm, ctx.commReleased);
          for (size_t k = 0; k < out.size(); ++k)
            postSendTagged(flight, out[k], peer, tags[k], msgOf(tags[k], static_cast<int>(k / 2)), ctx.rank);
          flight.waitAll();
          return;
        }
        std::vector<Message> in;
        for (int tagIndex = 0; tagIndex < 2; ++tagIndex)
          for (int i = 0; i < kPerTag; ++i) in.push_back(Message::incoming(loomInt32, counts[i], (i + 1) % 3));
        InFlight flight(ctx.comm, ctx.commReleased);
        size_t k = 0;
        for (int tag : {9, 5})
          for (int i = 0; i < kPerTag; ++i, ++k) postRecvTagged(flight, in[k], peer, tag, msgOf(tag, i), ctx.rank);
        flight.waitAllReversed();
        if (!flight.ok()) return;
        k = 0;
        for (int tag : {9, 5})
          for (int i = 0; i < kPerTag; ++i, ++k)
            in[k].expectFrom(peer, msgOf(tag, i), tagged(describe("Recv", in[k], "from", peer, i, ctx.rank), tag));
      },
      options());
}

// Every rank sends every other rank one message on each of tags 0 (plain
// loomSend) to 3, all posted before any Recv; every rank then receives them
// tag by tag from the highest down, peers in reverse order, blocking. Tag 0
// through loomRecv and loomRecvTagged alike, empty messages included.
TEST_P(TaggedPointToPointTest, AllPairsAllTagsWithPlainSendsAndEmptyMessages) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        constexpr int kTags = 4;
        auto countOf = [](int from, int to, int tag) {
          return size_t(tag == 2 ? 0 : 1 + from * 13 + to * 7 + tag * 1000);
        };
        auto msgOf = [&](int to, int tag) { return to * kTags + tag; };
        std::vector<Message> out;
        std::vector<std::tuple<int, int>> where;  // (peer, tag)
        for (int peer = 0; peer < ctx.nranks; ++peer)
          for (int tag = 0; tag < kTags; ++tag)
            if (peer != ctx.rank) {
              out.push_back(
                  Message::outgoing(loomUint8, countOf(ctx.rank, peer, tag), ctx.rank, msgOf(peer, tag), tag % 3));
              where.emplace_back(peer, tag);
            }
        InFlight flight(ctx.comm, ctx.commReleased);
        for (size_t k = 0; k < out.size(); ++k) {
          const auto [peer, tag] = where[k];
          if (tag == 0)
            flight.postSend(out[k], peer, msgOf(peer, tag), ctx.rank);
          else
            postSendTagged(flight, out[k], peer, tag, msgOf(peer, tag), ctx.rank);
        }
        for (int tag = kTags - 1; tag >= 0; --tag)
          for (int peer = ctx.nranks - 1; peer >= 0; --peer) {
            if (peer == ctx.rank) continue;
            Message in = Message::incoming(loomUint8, countOf(peer, ctx.rank, tag), 1);
            const std::string what = tagged(describe("blocking Recv", in, "from", peer, tag, ctx.rank), tag);
            const loomResult_t rc =
                tag == 0 && peer % 2 == 0
                    ? loomRecv(in.data(), in.count(), in.dtype(), peer, ctx.comm, nullptr, nullptr)
                    : loomRecvTagged(in.data(), in.count(), in.dtype(), peer, tag, ctx.comm, nullptr, nullptr);
            if (!expectOk(rc, ctx.comm, what)) return;
            in.expectFrom(peer, msgOf(ctx.rank, tag), what);
          }
        flight.waitAll();
      },
      options());
}

// A Recv whose count differs from the Send of its tag fails naming the
// message, its tag and both counts, and the failure reaches every rank.
TEST_P(TaggedPointToPointTest, ACountMismatchWithinATagNamesTheTag) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        int32_t data[12] = {};
        if (ctx.rank == 0) {
          const loomResult_t rc = loomSendTagged(data, 10, loomInt32, 1, 6, ctx.comm, nullptr, nullptr);
          EXPECT_EQ(rc, loomSuccess) << loomCommGetLastError(ctx.comm);
        } else if (ctx.rank == 1) {
          const loomResult_t rc = loomRecvTagged(data, 11, loomInt32, 0, 6, ctx.comm, nullptr, nullptr);
          EXPECT_EQ(rc, loomInvalidUsage) << loomCommGetLastError(ctx.comm);
          const std::string sentence = loomCommGetLastError(ctx.comm);
          EXPECT_NE(sentence.find("message #1 with tag 6 from rank 0 is a Send of 10 int32, but this Recv expects 11 "
                                  "int32"),
                    std::string::npos)
              << sentence;
        }
        EXPECT_NE(loomBarrier(ctx.comm, nullptr), loomSuccess) << "rank " << ctx.rank;
      },
      options());
}

// A negative tag is the caller's mistake, said before anything is posted.
TEST_P(TaggedPointToPointTest, ANegativeTagIsRefused) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        int value = 0;
        const int peer = (ctx.rank + 1) % ctx.nranks;
        EXPECT_EQ(loomSendTagged(&value, 1, loomInt32, peer, -1, ctx.comm, nullptr, nullptr), loomInvalidArgument);
        EXPECT_STREQ(loomGetLastError(), "loomSendTagged: tag is -1; tags are 0 or more");
        EXPECT_EQ(loomRecvTagged(&value, 1, loomInt32, peer, -3, ctx.comm, nullptr, nullptr), loomInvalidArgument);
        EXPECT_STREQ(loomGetLastError(), "loomRecvTagged: tag is -3; tags are 0 or more");
      },
      options());
}

// ---- From any source --------------------------------------------------------

// Every other rank sends rank 0 one message of tag 2 (of many slots), after
// a delay that differs by rank; rank 0 receives them from any source,
// blocking, and gets each sender exactly once, with its contents.
TEST_P(TaggedPointToPointTest, RecvFromAnySourceGetsEverySenderOnce) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const size_t count = largeCount(loomInt32, 1 << 20);
        if (ctx.rank != 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20 * (ctx.nranks - ctx.rank)));
          const Message out = Message::outgoing(loomInt32, count, ctx.rank, 1, ctx.rank % 3);
          expectOk(loomSendTagged(out.data(), count, loomInt32, 0, 2, ctx.comm, nullptr, nullptr), ctx.comm,
                   "rank " + std::to_string(ctx.rank) + ": Send with tag 2 to rank 0");
          return;
        }
        std::vector<int> seen(ctx.nranks, 0);
        for (int m = 1; m < ctx.nranks; ++m) {
          Message in = Message::incoming(loomInt32, count, m % 3);
          int source = -1;
          const std::string what = "rank 0: Recv from any source, number " + std::to_string(m);
          if (!expectOk(loomRecvAnySource(in.data(), count, loomInt32, 2, &source, ctx.comm, nullptr, nullptr),
                        ctx.comm, what))
            return;
          ASSERT_GT(source, 0) << what;
          ASSERT_LT(source, ctx.nranks) << what;
          ++seen[source];
          in.expectFrom(source, 1, what + " (from rank " + std::to_string(source) + ")");
        }
        for (int r = 1; r < ctx.nranks; ++r) EXPECT_EQ(seen[r], 1) << "messages from rank " << r;
      },
      options());
}

// Messages go to Recvs in posting order, as in MPI, whether a Recv names
// the sender or not: rank 0 posts a Recv from any source, one from rank 1,
// another from any source, then rank 1 sends three messages. The first
// goes to the first Recv, the second to the second, the third to the
// third; the other ranks send nothing.
TEST_P(TaggedPointToPointTest, RecvsFromAnySourceAndFromOneRankMatchInPostingOrder) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        const size_t counts[3] = {5, 70000, 5};
        if (ctx.rank == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          for (int m = 0; m < 3; ++m) {
            const Message out = Message::outgoing(loomFloat32, counts[m], 1, m, m);
            if (!expectOk(loomSend(out.data(), counts[m], loomFloat32, 0, ctx.comm, nullptr, nullptr), ctx.comm,
                          describe("Send", out, "to", 0, m, 1)))
              return;
          }
          return;
        }
        if (ctx.rank != 0) return;
        std::vector<Message> in;
        for (int m = 0; m < 3; ++m) in.push_back(Message::incoming(loomFloat32, counts[m], (m + 1) % 3));
        int sources[3] = {-1, 1, -1};
        InFlight flight(ctx.comm, ctx.commReleased);
        for (int m = 0; m < 3; ++m) {
          if (m == 1)
            flight.postRecv(in[m], 1, m, 0);
          else
            flight.post("rank 0: Recv from any source, message " + std::to_string(m), [&](loomRequest_t* r) {
              return loomRecvAnySource(in[m].data(), counts[m], loomFloat32, 0, &sources[m], ctx.comm, nullptr, r);
            });
        }
        flight.waitAllReversed();
        if (!flight.ok()) return;
        for (int m = 0; m < 3; ++m) {
          EXPECT_EQ(sources[m], 1) << "message " << m;
          in[m].expectFrom(1, m, "rank 0: Recv " + std::to_string(m));
        }
      },
      options());
}

// A Recv from any source of tag 5 while every sender's first message is of
// tag 3: those wait in the inbox, and Recvs naming each sender take them
// afterwards.
TEST_P(TaggedPointToPointTest, RecvFromAnySourceLeavesOtherTagsForTheirRecvs) {
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        if (ctx.rank != 0) {
          const Message three = Message::outgoing(loomInt8, 300, ctx.rank, 3, 0);
          const Message five = Message::outgoing(loomInt8, 500, ctx.rank, 5, 1);
          InFlight flight(ctx.comm, ctx.commReleased);
          postSendTagged(flight, three, 0, 3, 3, ctx.rank);
          if (ctx.rank == ctx.nranks - 1) postSendTagged(flight, five, 0, 5, 5, ctx.rank);  // one tag-5 message
          flight.waitAll();
          return;
        }
        Message five = Message::incoming(loomInt8, 500, 2);
        int source = -1;
        if (!expectOk(loomRecvAnySource(five.data(), 500, loomInt8, 5, &source, ctx.comm, nullptr, nullptr), ctx.comm,
                      "rank 0: Recv from any source with tag 5"))
          return;
        EXPECT_EQ(source, ctx.nranks - 1);
        five.expectFrom(ctx.nranks - 1, 5, "rank 0: Recv from any source with tag 5");
        for (int peer = 1; peer < ctx.nranks; ++peer) {
          Message three = Message::incoming(loomInt8, 300, peer % 3);
          const std::string what = tagged(describe("blocking Recv", three, "from", peer, 3, 0), 3);
          if (!expectOk(loomRecvTagged(three.data(), 300, loomInt8, peer, 3, ctx.comm, nullptr, nullptr), ctx.comm,
                        what))
            return;
          three.expectFrom(peer, 3, what);
        }
      },
      options());
}

// A Recv from any source that nobody sends to fails within the
// communicator's timeout, saying so (once every other rank has left, it
// fails then, naming one); a negative tag is refused at once.
TEST_P(TaggedPointToPointTest, RecvFromAnySourceThatNobodySendsToTimesOut) {
  HarnessOptions quick = options();
  quick.timeoutMs = 500;
  runRanks(
      mode(), nranks(),
      [](const RankContext& ctx) {
        int value = 0, source = -1;
        EXPECT_EQ(loomRecvAnySource(&value, 1, loomInt32, -4, &source, ctx.comm, nullptr, nullptr),
                  loomInvalidArgument);
        EXPECT_STREQ(loomGetLastError(), "loomRecvAnySource: tag is -4; tags are 0 or more");
        if (ctx.rank != 0) {
          // Stays (sending nothing) past rank 0's timeout: a sender that
          // left would end the wait sooner, saying so.
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));
          return;
        }
        EXPECT_EQ(loomRecvAnySource(&value, 1, loomInt32, 8, &source, ctx.comm, nullptr, nullptr), loomTimeout);
        const std::string sentence = loomCommGetLastError(ctx.comm);
        EXPECT_NE(sentence.find("timed out after 500 ms waiting for any rank to send data (no rank sent a message "
                                "this Recv matches)"),
                  std::string::npos)
            << sentence;
        EXPECT_EQ(source, -1) << "no sender matched";
      },
      quick);
}

INSTANTIATE_TEST_SUITE_P(Ranks, TaggedPointToPointTest,
                         ::testing::Combine(::testing::Values(RankMode::kThreads, RankMode::kProcesses),
                                            ::testing::Values(2, 3, 5)),
                         [](const auto& info) {
                           return modeName(std::get<0>(info.param)) + std::to_string(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace loom::test

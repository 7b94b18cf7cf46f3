// What the point-to-point and group suites share: message contents as a
// formula of the sending rank, a message number and the element index;
// buffers with a guard byte and an odd alignment; and the requests a rank
// has in flight, aborted if a test fails while they still run.
#pragma once

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

#include "support/rank_harness.h"

namespace loom::test {

// A deadlock fails within this with loomTimeout instead of hanging the suite.
constexpr int64_t kTimeoutMs = 20000;

inline HarnessOptions options() {
  HarnessOptions o;
  o.timeoutMs = kTimeoutMs;
  o.waitSeconds = 120;
  return o;
}

// The shared-memory FIFO between two ranks holds LOOM_SHM_SLOTS (8) slots of
// LOOM_SHM_SLOT_BYTES (128 KiB) by default, 1 MiB in all: a message of
// several MiB laps it several times, so its Send cannot finish before the
// matching Recv drains it.
constexpr size_t kLargeBytes = 4 << 20;
// Tests that send to every peer at once use less per message (they move
// nranks - 1 times as much), still twice the FIFO.
constexpr size_t kLargePairBytes = 2 << 20;

// An odd element count of about `bytes`, so the last chunk is a partial one.
inline size_t largeCount(loomDataType_t dtype, size_t bytes) {
  return bytes / loomTypeSize(dtype) + 3;
}

// ---- Message contents ------------------------------------------------------

// Element i of message `msg` sent by rank `from`. The i / 251 term makes a
// chunk delivered at the wrong offset show even in int8.
inline uint64_t patternKey(int from, int msg, size_t i) {
  return static_cast<uint64_t>(from) * 7919 + static_cast<uint64_t>(msg) * 104729 + i * 31 + i / 251;
}

// Integers wrap (C++20 conversions); floats stay below 2^24, exact in float32.
template <typename T>
T patternValue(uint64_t key) {
  if constexpr (std::is_floating_point_v<T>)
    return static_cast<T>(key % 1000003);
  else
    return static_cast<T>(key);
}

template <typename Fn>
bool withType(loomDataType_t dtype, Fn&& fn) {
  switch (dtype) {
    case loomInt8: fn(int8_t{}); return true;
    case loomUint8: fn(uint8_t{}); return true;
    case loomInt32: fn(int32_t{}); return true;
    case loomUint32: fn(uint32_t{}); return true;
    case loomInt64: fn(int64_t{}); return true;
    case loomUint64: fn(uint64_t{}); return true;
    case loomFloat32: fn(float{}); return true;
    case loomFloat64: fn(double{}); return true;
    default: ADD_FAILURE() << "no test pattern for dtype " << loomTypeName(dtype); return false;
  }
}

// One message's buffer, starting `misalign` bytes past an allocation (user
// buffers need not be aligned), with one guard byte after its last element.
class Message {
 public:
  // A Send's buffer holding the pattern of (from, msg).
  static Message outgoing(loomDataType_t dtype, size_t count, int from, int msg, size_t misalign = 0) {
    Message m(dtype, count, misalign);
    m.fill(from, msg);
    return m;
  }
  // A Recv's buffer: 0xEE everywhere until something arrives.
  static Message incoming(loomDataType_t dtype, size_t count, size_t misalign = 0) {
    return Message(dtype, count, misalign);
  }

  void* data() { return storage_.data() + misalign_; }
  const void* data() const { return storage_.data() + misalign_; }
  size_t count() const { return count_; }
  loomDataType_t dtype() const { return dtype_; }

  void fill(int from, int msg) {
    unsigned char* out = storage_.data() + misalign_;
    withType(dtype_, [&](auto zero) {
      using T = decltype(zero);
      for (size_t i = 0; i < count_; ++i) {
        const T value = patternValue<T>(patternKey(from, msg, i));
        std::memcpy(out + i * sizeof(T), &value, sizeof(T));
      }
    });
  }

  // Expects exactly the pattern of (from, msg), and the guard byte untouched.
  void expectFrom(int from, int msg, const std::string& what) const {
    const unsigned char* in = storage_.data() + misalign_;
    withType(dtype_, [&](auto zero) {
      using T = decltype(zero);
      for (size_t i = 0; i < count_; ++i) {
        T got;
        std::memcpy(&got, in + i * sizeof(T), sizeof(T));
        const T want = patternValue<T>(patternKey(from, msg, i));
        if (got != want) {
          ADD_FAILURE() << what << ": element " << i << " of " << count_ << " is " << +got << ", expected " << +want
                        << " (message " << msg << " of rank " << from << ")";
          return;
        }
      }
    });
    EXPECT_EQ(in[count_ * loomTypeSize(dtype_)], 0xEE) << what << ": the byte after the last element was written";
  }

 private:
  Message(loomDataType_t dtype, size_t count, size_t misalign)
      : dtype_(dtype),
        count_(count),
        misalign_(misalign),
        storage_(misalign + count * loomTypeSize(dtype) + 1, static_cast<unsigned char>(0xEE)) {}

  loomDataType_t dtype_;
  size_t count_;
  size_t misalign_;
  std::vector<unsigned char> storage_;
};

inline std::string describe(const char* op, const Message& m, const char* direction, int peer, int msg, int rank) {
  return std::string("rank ") + std::to_string(rank) + ": " + op + " of " + std::to_string(m.count()) + " " +
         loomTypeName(m.dtype()) + " " + direction + " rank " + std::to_string(peer) + " (message " +
         std::to_string(msg) + ")";
}

inline bool expectOk(loomResult_t rc, loomComm_t comm, const std::string& what) {
  EXPECT_EQ(rc, loomSuccess) << what << ": " << loomGetErrorString(rc) << ": " << loomCommGetLastError(comm);
  return rc == loomSuccess;
}

// ---- Requests in flight ----------------------------------------------------

// The requests a rank has in flight on one communicator. Declare it after
// the buffers its operations use, so it is destroyed before them: a request
// still unfinished then (the test has already failed) gets the communicator
// aborted, so no operation writes into freed memory and the harness does
// not wait on it at destroy.
class InFlight {
 public:
  InFlight(loomComm_t comm, bool* released) : comm_(comm), released_(released) {}
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  ~InFlight() {
    std::string pending;
    for (const Entry& e : entries_)
      if (e.request != nullptr && pending.empty()) pending = e.what;
    if (!pending.empty() && !*released_) {
      ADD_FAILURE() << pending << ": still unfinished at the end of its case; aborting the communicator";
      loomCommAbort(comm_);
      *released_ = true;
    }
    for (Entry& e : entries_)
      if (e.request != nullptr) loomRequestFree(e.request);
  }

  loomComm_t comm() const { return comm_; }
  size_t size() const { return entries_.size(); }
  // The handle of a posted call, nullptr once waited (or if never posted).
  loomRequest_t request(size_t index) const { return entries_.at(index).request; }
  // False once a post or a wait failed: the case has failed, and the
  // contents of its buffers mean nothing.
  bool ok() const { return !failed_; }

  // Makes `call` with a request slot; expects loomSuccess and a handle.
  template <typename Call>
  size_t post(const std::string& what, Call&& call) {
    loomRequest_t request = nullptr;
    const loomResult_t rc = call(&request);
    if (!expectOk(rc, comm_, what + " (posting)")) failed_ = true;
    EXPECT_TRUE(rc != loomSuccess || request != nullptr) << what << ": no request handle";
    entries_.push_back(Entry{rc == loomSuccess ? request : nullptr, what});
    return entries_.size() - 1;
  }
  size_t postSend(const Message& m, int peer, int msg, int rank) {
    return post(describe("Send", m, "to", peer, msg, rank),
                [&](loomRequest_t* r) { return loomSend(m.data(), m.count(), m.dtype(), peer, comm_, nullptr, r); });
  }
  size_t postRecv(Message& m, int peer, int msg, int rank) {
    return post(describe("Recv", m, "from", peer, msg, rank),
                [&](loomRequest_t* r) { return loomRecv(m.data(), m.count(), m.dtype(), peer, comm_, nullptr, r); });
  }

  // Waits, expects success and frees the request. The wait outlasts the
  // communicator's timeout, so an operation that cannot finish fails with
  // its own error (naming what it waited for) before the wait gives up.
  void wait(size_t index) {
    Entry& e = entries_.at(index);
    if (e.request == nullptr) return;  // never posted (reported) or already waited
    const loomResult_t rc = loomWait(e.request, kTimeoutMs + 5000);
    if (rc != loomSuccess) {
      ADD_FAILURE() << e.what << ": loomWait: " << loomGetErrorString(rc) << ": " << loomCommGetLastError(comm_);
      failed_ = true;
      return;  // kept, so the destructor aborts the communicator
    }
    EXPECT_EQ(loomRequestFree(e.request), loomSuccess) << e.what;
    e.request = nullptr;
  }
  void waitAll() {
    for (size_t i = 0; i < entries_.size(); ++i) wait(i);
  }
  void waitAllReversed() {
    for (size_t i = entries_.size(); i-- > 0;) wait(i);
  }

 private:
  struct Entry {
    loomRequest_t request;
    std::string what;
  };
  loomComm_t comm_;
  bool* released_;
  bool failed_ = false;
  std::deque<Entry> entries_;
};

// Ring neighbours.
inline int nextOf(const RankContext& ctx) {
  return (ctx.rank + 1) % ctx.nranks;
}
inline int prevOf(const RankContext& ctx) {
  return (ctx.rank + ctx.nranks - 1) % ctx.nranks;
}

// AllReduce (int32 sum) input whose sum over ranks is known in closed form.
inline int32_t allReduceInput(int rank, size_t i) {
  return (rank + 1) * static_cast<int32_t>(1 + i % 13);
}
inline void expectAllReduceSum(const std::vector<int32_t>& out, int nranks, const std::string& what) {
  const int32_t ranksSum = nranks * (nranks + 1) / 2;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] != ranksSum * static_cast<int32_t>(1 + i % 13)) {
      ADD_FAILURE() << what << ": element " << i << " of " << out.size() << " is " << out[i] << ", expected "
                    << ranksSum * static_cast<int32_t>(1 + i % 13);
      return;
    }
  }
}
inline std::vector<int32_t> allReduceInputs(int rank, size_t count) {
  std::vector<int32_t> in(count);
  for (size_t i = 0; i < count; ++i) in[i] = allReduceInput(rank, i);
  return in;
}

}  // namespace loom::test

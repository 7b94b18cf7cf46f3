#include "collective_spec.h"

#include <cstring>

namespace loom::perf {
namespace {

size_t sameCount(size_t bytes, size_t typeSize, int) {
  return bytes / typeSize;
}
// AllGather, ReduceScatter, AllToAll: the size is the whole buffer; count is
// rounded down to a multiple of nranks, as nccl-tests does.
size_t splitCount(size_t bytes, size_t typeSize, int nranks) {
  return bytes / typeSize / nranks * nranks;
}
size_t whole(size_t count, int) {
  return count;
}
size_t perRank(size_t count, int nranks) {
  return count / nranks;
}
double one(int) {
  return 1.0;
}
double ringShare(int n) {
  return static_cast<double>(n - 1) / n;
}
double allReduceFactor(int n) {
  return 2.0 * (n - 1) / n;
}

}  // namespace

const CollectiveSpec& allReduceSpec() {
  static const CollectiveSpec spec{"AllReduce",
                                   true,
                                   false,
                                   sameCount,
                                   whole,
                                   whole,
                                   CollectiveSpec::InPlace::kSame,
                                   allReduceFactor,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomAllReduce(a.send, a.recv, count, a.dtype, a.op, a.comm, nullptr, req);
                                   }};
  return spec;
}

const CollectiveSpec& allGatherSpec() {
  static const CollectiveSpec spec{"AllGather",
                                   false,
                                   false,
                                   splitCount,
                                   perRank,
                                   whole,
                                   CollectiveSpec::InPlace::kSendInsideRecv,
                                   ringShare,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomAllGather(a.send, a.recv, count / a.nranks, a.dtype, a.comm, nullptr,
                                                          req);
                                   }};
  return spec;
}

const CollectiveSpec& reduceScatterSpec() {
  static const CollectiveSpec spec{"ReduceScatter",
                                   true,
                                   false,
                                   splitCount,
                                   whole,
                                   perRank,
                                   CollectiveSpec::InPlace::kRecvInsideSend,
                                   ringShare,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomReduceScatter(a.send, a.recv, count / a.nranks, a.dtype, a.op, a.comm,
                                                              nullptr, req);
                                   }};
  return spec;
}

const CollectiveSpec& broadcastSpec() {
  static const CollectiveSpec spec{"Broadcast",
                                   false,
                                   true,
                                   sameCount,
                                   whole,
                                   whole,
                                   CollectiveSpec::InPlace::kSame,
                                   one,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomBroadcast(a.send, a.recv, count, a.dtype, a.root, a.comm, nullptr, req);
                                   }};
  return spec;
}

const CollectiveSpec& reduceSpec() {
  static const CollectiveSpec spec{"Reduce",
                                   true,
                                   true,
                                   sameCount,
                                   whole,
                                   whole,
                                   CollectiveSpec::InPlace::kSame,
                                   one,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomReduce(a.send, a.recv, count, a.dtype, a.op, a.root, a.comm, nullptr,
                                                       req);
                                   }};
  return spec;
}

const CollectiveSpec& allToAllSpec() {
  static const CollectiveSpec spec{"AllToAll",
                                   false,
                                   false,
                                   splitCount,
                                   whole,
                                   whole,
                                   CollectiveSpec::InPlace::kSame,
                                   ringShare,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomAllToAll(a.send, a.recv, count / a.nranks, a.dtype, a.comm, nullptr,
                                                         req);
                                   }};
  return spec;
}

// As nccl-tests' sendrecv: every rank sends to rank+1 and receives from
// rank-1. Operations run in issue order, so even ranks send first and odd
// ranks receive first; a request covers the second of the two.
const CollectiveSpec& sendRecvSpec() {
  static const CollectiveSpec spec{
      "SendRecv",
      false,
      false,
      sameCount,
      whole,
      whole,
      CollectiveSpec::InPlace::kNone,
      one,
      [](const CallArgs& a, size_t count, loomRequest_t* req) {
        if (a.nranks == 1) {  // as nccl-tests: a rank alone sends to itself
          std::memcpy(a.recv, a.send, count * loomTypeSize(a.dtype));
          return loomSuccess;
        }
        const int next = (a.rank + 1) % a.nranks, prev = (a.rank + a.nranks - 1) % a.nranks;
        loomRequest_t first = nullptr;
        loomResult_t rc = a.rank % 2 == 0 ? loomSend(a.send, count, a.dtype, next, a.comm, nullptr, &first)
                                          : loomRecv(a.recv, count, a.dtype, prev, a.comm, nullptr, &first);
        if (rc != loomSuccess) return rc;
        loomRequestFree(first);  // completes before the second, which the caller waits for
        return a.rank % 2 == 0 ? loomRecv(a.recv, count, a.dtype, prev, a.comm, nullptr, req)
                               : loomSend(a.send, count, a.dtype, next, a.comm, nullptr, req);
      }};
  return spec;
}

}  // namespace loom::perf

#include "collective_spec.h"

#include <cstring>

namespace loom::perf {
namespace {

CollCounts sameCount(size_t count, size_t, int) {
  return {count, count, count, 0, 0};
}
// Per-rank blocks rounded down to 16 bytes, as nccl-tests does.
size_t block16(size_t count, size_t eltSize, int nranks) {
  return (count / nranks) & ~(16 / eltSize - 1);
}
CollCounts allGatherCount(size_t count, size_t eltSize, int nranks) {
  size_t base = block16(count, eltSize, nranks);
  return {base, base * nranks, base, base, 0};
}
CollCounts reduceScatterCount(size_t count, size_t eltSize, int nranks) {
  size_t base = block16(count, eltSize, nranks);
  return {base * nranks, base, base, 0, base};
}
CollCounts allToAllCount(size_t count, size_t eltSize, int nranks) {
  size_t base = block16(count, eltSize, nranks);
  return {base * nranks, base * nranks, base, 0, 0};
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
  static const CollectiveSpec spec{"AllReduce", true, false, true, sameCount, false, allReduceFactor,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomAllReduce(a.send, a.recv, count, a.dtype, a.op, a.comm, nullptr, req);
                                   }};
  return spec;
}

const CollectiveSpec& allGatherSpec() {
  static const CollectiveSpec spec{"AllGather", false, false, false, allGatherCount, false, ringShare,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomAllGather(a.send, a.recv, count, a.dtype, a.comm, nullptr,
                                                          req);
                                   }};
  return spec;
}

const CollectiveSpec& reduceScatterSpec() {
  static const CollectiveSpec spec{"ReduceScatter", true, false, true, reduceScatterCount, false, ringShare,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomReduceScatter(a.send, a.recv, count, a.dtype, a.op, a.comm,
                                                              nullptr, req);
                                   }};
  return spec;
}

const CollectiveSpec& broadcastSpec() {
  static const CollectiveSpec spec{"Broadcast", false, true, false, sameCount, false, one,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomBroadcast(a.send, a.recv, count, a.dtype, a.root, a.comm, nullptr, req);
                                   }};
  return spec;
}

const CollectiveSpec& reduceSpec() {
  static const CollectiveSpec spec{"Reduce", true, true, true, sameCount, false, one,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomReduce(a.send, a.recv, count, a.dtype, a.op, a.root, a.comm, nullptr,
                                                       req);
                                   }};
  return spec;
}

const CollectiveSpec& allToAllSpec() {
  static const CollectiveSpec spec{"AllToAll", false, false, false, allToAllCount, false, ringShare,
                                   [](const CallArgs& a, size_t count, loomRequest_t* req) {
                                     return loomAllToAll(a.send, a.recv, count, a.dtype, a.comm, nullptr,
                                                         req);
                                   }};
  return spec;
}

// As nccl-tests' sendrecv: every rank sends to rank+1 and receives from
// rank-1, the two calls in one group (so they progress together, whichever
// way round the ranks post them).
const CollectiveSpec& sendRecvSpec() {
  static const CollectiveSpec spec{
      "SendRecv", false, false, true, sameCount, true, one,
      [](const CallArgs& a, size_t count, loomRequest_t* req) {
        if (a.nranks == 1) {  // as nccl-tests: a rank alone sends to itself
          std::memcpy(a.recv, a.send, count * loomTypeSize(a.dtype));
          return loomSuccess;
        }
        const int next = (a.rank + 1) % a.nranks, prev = (a.rank + a.nranks - 1) % a.nranks;
        loomResult_t rc = loomGroupStart();
        if (rc != loomSuccess) return rc;
        loomResult_t sent = loomSend(a.send, count, a.dtype, next, a.comm, nullptr, req ? &req[0] : nullptr);
        loomResult_t received = loomRecv(a.recv, count, a.dtype, prev, a.comm, nullptr, req ? &req[1] : nullptr);
        rc = loomGroupEnd();
        return sent != loomSuccess ? sent : received != loomSuccess ? received : rc;
      }};
  return spec;
}

}  // namespace loom::perf

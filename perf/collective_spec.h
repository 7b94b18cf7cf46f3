// What the perf harness needs to know about each collective: how the
// table's "size" maps to counts (as nccl-tests defines it), the bus
// bandwidth factor, how to call it, and what every rank should hold after.
#pragma once

#include <loom/loom.h>

#include <cstddef>

namespace loom::perf {

struct CallArgs {
  const void* send;
  void* recv;
  loomDataType_t dtype;
  loomRedOp_t op;
  int root;
  loomComm_t comm;
  int rank;
  int nranks;
};

// nccl-tests' getCollByteCount: for a requested size of `count` elements,
// the send and receive buffer lengths, the count passed to the collective
// (the table's count column), and in-place offsets per rank (elements).
struct CollCounts {
  size_t send, recv, param, sendInPlaceOffset, recvInPlaceOffset;
};

struct CollectiveSpec {
  const char* name;  // "AllReduce"
  bool hasOp;        // reduces: -o chooses the op
  bool hasRoot;      // -r chooses the root
  bool printsOp;     // the redop column names -o's op (SendRecv, as nccl-tests, without using it)
  CollCounts (*counts)(size_t count, size_t eltSize, int nranks);
  // SendRecv only: its Send and Recv run at once, so one buffer would lose
  // data; its in-place column repeats out-of-place.
  bool inPlaceIsOutOfPlace;
  double (*busFactor)(int nranks);
  // `count` is CollCounts::param. `requests` is null for a blocking call,
  // else room for kMaxRequests handles (SendRecv posts two), the unused
  // ones left null.
  loomResult_t (*call)(const CallArgs& args, size_t count, loomRequest_t* requests);
  static constexpr int kMaxRequests = 2;
};

const CollectiveSpec& allReduceSpec();
const CollectiveSpec& allGatherSpec();
const CollectiveSpec& reduceScatterSpec();
const CollectiveSpec& broadcastSpec();
const CollectiveSpec& reduceSpec();
const CollectiveSpec& allToAllSpec();
const CollectiveSpec& sendRecvSpec();

}  // namespace loom::perf

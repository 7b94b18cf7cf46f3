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

struct CollectiveSpec {
  const char* name;  // "AllReduce"
  bool hasOp;
  bool hasRoot;
  // Elements per rank as the table's `count` column shows, for `bytes`.
  size_t (*countFor)(size_t bytes, size_t typeSize, int nranks);
  // Bytes of the send and receive buffers for that count.
  size_t (*sendElements)(size_t count, int nranks);
  size_t (*recvElements)(size_t count, int nranks);
  // The in-place form: one buffer, and where each side sits in it (loom.h).
  enum class InPlace {
    kSame,            // sendbuf == recvbuf
    kSendInsideRecv,  // AllGather: sendbuf == recvbuf + rank * block
    kRecvInsideSend,  // ReduceScatter: recvbuf == sendbuf + rank * block
    kNone,            // SendRecv: odd ranks receive before they send, so one
                      // buffer would lose their data; in-place repeats out-of-place
  };
  InPlace inPlace;
  double (*busFactor)(int nranks);
  loomResult_t (*call)(const CallArgs& args, size_t count, loomRequest_t* request);
};

const CollectiveSpec& allReduceSpec();
const CollectiveSpec& allGatherSpec();
const CollectiveSpec& reduceScatterSpec();
const CollectiveSpec& broadcastSpec();
const CollectiveSpec& reduceSpec();
const CollectiveSpec& allToAllSpec();
const CollectiveSpec& sendRecvSpec();

}  // namespace loom::perf

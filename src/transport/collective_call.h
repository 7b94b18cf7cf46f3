// What every rank of a communicator must agree on for one collective. Each
// rank publishes its own on its status page, and every message a collective
// sends is labeled with it (message_label.h), so a rank that called
// something else is named in a sentence instead of hanging or reading the
// wrong bytes.
#pragma once

#include <cstdint>
#include <string>

namespace loom {

// Every kind of operation, as labels and status pages carry it.
enum class OperationKind : uint8_t {
  kUnknown,
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kBarrier,
  kRegister,
  kDeregister,
  kSend,  // a point-to-point message (its Recv expects the same label)
  kGather,
  kScatter,
  kAllToAllv,  // its label's count is each pair's own; its call's, 0
  kCount
};
// "AllReduce"; "unknown operation" for anything out of range.
const char* operationName(OperationKind kind);

struct CollectiveCall {
  uint64_t number = 0;  // the collective's number on this communicator
  OperationKind kind = OperationKind::kUnknown;
  uint64_t count = 0;
  int32_t dtype = 0;
  int32_t op = -1;    // -1: the collective does not reduce
  int32_t root = -1;  // -1: the collective has no root

  bool sameCallAs(const CollectiveCall& other) const;
  // "AllReduce #3 of 1048576 float32 (sum)"
  std::string describe() const;
};

}  // namespace loom

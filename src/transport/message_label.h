// The label every message carries: which operation sent it. The sender
// writes its operation's label in front of each slot's data; the receiver
// compares it with the label of the operation it runs before it reads a
// byte. Ranks that called different collectives, or the same one with
// another count, datatype, op or root, or a Send and Recv that disagree,
// then fail on their first exchange with a sentence naming both calls,
// whatever the timing; and a message left over from a failed operation is
// never read by a later one (its number differs).
#pragma once

#include <cstdint>
#include <string>

#include "transport/collective_call.h"

namespace loom {

struct WaitContext;

struct MessageLabel {
  // A collective's number on the communicator; for point-to-point, the
  // message's number among those from its sender to its receiver.
  uint64_t number = 0;
  uint64_t count = 0;
  int32_t root = -1;
  OperationKind kind = OperationKind::kUnknown;
  int8_t dtype = 0;
  int8_t op = -1;
  uint8_t unused = 0;

  bool operator==(const MessageLabel&) const = default;

  static MessageLabel of(const CollectiveCall& call);
  // The label of message `number` (among all from a sender to a receiver)
  // of `tag`: the Send writes it, the matching Recv expects it. The tag
  // travels in `root`, which no point-to-point message otherwise uses.
  static MessageLabel pointToPoint(uint64_t number, uint64_t count, int dtype, int tag = 0);
  // The call it labels, to describe ("AllReduce #3 of 100 float32 (sum)",
  // "Send #2 of 100 float32").
  CollectiveCall call() const;
  // A point-to-point message's tag, when not 0, follows its number.
  std::string describe() const;
};
static_assert(sizeof(MessageLabel) == 24, "labels travel in every slot; keep them small");

// The receiving side: throws the sentence when a message's label is not the
// one the waiting operation expects.
void checkLabel(const MessageLabel& received, int sender, const WaitContext& wait);
// Throws the sentence for a message of `arrived` data bytes where the
// waiting operation's schedule reads `expected`.
[[noreturn]] void failDataBytes(size_t arrived, size_t expected, int sender, const WaitContext& wait);

}  // namespace loom

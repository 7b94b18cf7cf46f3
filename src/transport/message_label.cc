#include "transport/message_label.h"

#include <loom/loom.h>

#include "base/error.h"
#include "transport/wait_context.h"

namespace loom {

MessageLabel MessageLabel::of(const CollectiveCall& call) {
  MessageLabel label;
  label.number = call.number;
  label.count = call.count;
  label.root = call.root;
  label.kind = call.kind;
  label.dtype = static_cast<int8_t>(call.dtype);
  label.op = static_cast<int8_t>(call.op);
  return label;
}

MessageLabel MessageLabel::pointToPoint(uint64_t number, uint64_t count, int dtype, int tag) {
  MessageLabel label;
  label.root = tag;
  label.number = number;
  label.count = count;
  label.kind = OperationKind::kSend;
  label.dtype = static_cast<int8_t>(dtype);
  return label;
}

CollectiveCall MessageLabel::call() const {
  CollectiveCall labeled;
  labeled.number = number;
  labeled.kind = kind;
  labeled.count = count;
  labeled.dtype = dtype;
  labeled.op = op;
  labeled.root = root;
  return labeled;
}

std::string MessageLabel::describe() const {
  if (kind != OperationKind::kSend) return call().describe();
  CollectiveCall untagged = call();
  untagged.root = -1;
  std::string text = untagged.describe();
  if (root != 0) text += " with tag " + std::to_string(root);
  return text;
}

namespace {

// "message #3" or "message #3 with tag 7".
std::string messageName(const MessageLabel& label) {
  std::string text = "message #" + std::to_string(label.number);
  if (label.root != 0) text += " with tag " + std::to_string(label.root);
  return text;
}

[[noreturn]] void failPointToPoint(const MessageLabel& received, int sender, const WaitContext& wait) {
  const MessageLabel& expected = wait.label;
  const std::string from = "rank " + std::to_string(sender);
  if (received.number != expected.number || received.kind != expected.kind || received.root != expected.root)
    fail(loomInternalError, wait.describe() + ": the point-to-point stream from " + from +
                                " is out of step: its next message is labeled " + received.describe() +
                                ", this rank expects " + messageName(expected) + " from it");
  fail(loomInvalidUsage,
       wait.describe() + ": " + messageName(expected) + " from " + from + " is a Send of " +
           std::to_string(received.count) + " " + loomTypeName(static_cast<loomDataType_t>(received.dtype)) +
           ", but this Recv expects " + std::to_string(expected.count) + " " +
           loomTypeName(static_cast<loomDataType_t>(expected.dtype)) +
           " (a Send and the Recv it matches, in posting order between the pair among messages of one tag, must "
           "agree on count and datatype)");
}

}  // namespace

void checkLabel(const MessageLabel& received, int sender, const WaitContext& wait) {
  if (received == wait.label) return;
  if (wait.label.kind == OperationKind::kSend) failPointToPoint(received, sender, wait);
  const MessageLabel& expected = wait.label;
  const std::string from = "rank " + std::to_string(sender);
  if (received.number < expected.number)
    fail(loomInvalidUsage,
         wait.describe() + " received from " + from + " a message of its " + received.describe() +
             ", an earlier collective, while this rank runs " + expected.describe() + ": in collective #" +
             std::to_string(received.number) +
             " that rank sent more than this rank read, so the ranks passed different arguments to it");
  if (received.number > expected.number)
    fail(loomInvalidUsage, wait.describe() + " received from " + from + " a message of its " + received.describe() +
                               ", a later collective, while this rank runs " + expected.describe() +
                               ": that rank finished collective #" + std::to_string(expected.number) +
                               " without sending what this rank waits for, so the ranks passed "
                               "different arguments to it");
  if (received.kind == OperationKind::kAllToAllv && expected.kind == OperationKind::kAllToAllv &&
      received.dtype == expected.dtype)
    fail(loomInvalidUsage, wait.describe() + ": " + from + " sends this rank " + std::to_string(received.count) + " " +
                               loomTypeName(static_cast<loomDataType_t>(received.dtype)) + ", but this rank expects " +
                               std::to_string(expected.count) +
                               " from it (each pair of ranks must agree on the counts between them)");
  fail(loomInvalidUsage, wait.describeMismatch(sender, received.call()));
}

void failDataBytes(size_t arrived, size_t expected, int sender, const WaitContext& wait) {
  fail(loomRemoteError, wait.describe() + " received from rank " + std::to_string(sender) + " a message of " +
                            std::to_string(arrived) + " bytes where its schedule reads " + std::to_string(expected) +
                            ": the two ranks cut this collective's messages differently (they run different "
                            "builds of Loom, or the bytes were corrupted)");
}

}  // namespace loom

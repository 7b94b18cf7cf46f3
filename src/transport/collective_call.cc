#include "transport/collective_call.h"

#include <loom/loom.h>

namespace loom {

const char* operationName(OperationKind kind) {
  switch (kind) {
    case OperationKind::kAllReduce: return "AllReduce";
    case OperationKind::kAllGather: return "AllGather";
    case OperationKind::kReduceScatter: return "ReduceScatter";
    case OperationKind::kBroadcast: return "Broadcast";
    case OperationKind::kReduce: return "Reduce";
    case OperationKind::kAllToAll: return "AllToAll";
    case OperationKind::kBarrier: return "Barrier";
    case OperationKind::kRegister: return "Register";
    case OperationKind::kDeregister: return "Deregister";
    case OperationKind::kSend: return "Send";
    case OperationKind::kGather: return "Gather";
    case OperationKind::kScatter: return "Scatter";
    case OperationKind::kAllToAllv: return "AllToAllv";
    case OperationKind::kUnknown:
    case OperationKind::kCount: break;
  }
  return "unknown operation";
}

bool CollectiveCall::sameCallAs(const CollectiveCall& other) const {
  return number == other.number && kind == other.kind && count == other.count && dtype == other.dtype &&
         op == other.op && root == other.root;
}

std::string CollectiveCall::describe() const {
  std::string text = std::string(operationName(kind)) + " #" + std::to_string(number) + " of " + std::to_string(count) +
                     " " + loomTypeName(static_cast<loomDataType_t>(dtype));
  if (op >= 0) text += " (" + std::string(loomOpName(static_cast<loomRedOp_t>(op))) + ")";
  if (root >= 0) text += " with root " + std::to_string(root);
  return text;
}

}  // namespace loom

#include "transport/collective_call.h"

#include <loom/loom.h>

#include <cstring>

namespace loom {

bool CollectiveCall::sameCallAs(const CollectiveCall& other) const {
  return number == other.number && std::strncmp(name, other.name, sizeof(name)) == 0 && count == other.count &&
         dtype == other.dtype && op == other.op && root == other.root;
}

std::string CollectiveCall::describe() const {
  std::string text = std::string(name, strnlen(name, sizeof(name))) + " #" + std::to_string(number) + " of " +
                     std::to_string(count) + " " + loomTypeName(static_cast<loomDataType_t>(dtype));
  if (op >= 0) text += " (" + std::string(loomOpName(static_cast<loomRedOp_t>(op))) + ")";
  if (root >= 0) text += " with root " + std::to_string(root);
  return text;
}

}  // namespace loom

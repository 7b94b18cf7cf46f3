#include "transport/wait_context.h"

namespace loom {

std::string WaitContext::describe() const {
  std::string text = std::string(operation) + " #" + std::to_string(sequence) + " on rank " + std::to_string(rank);
  if (commName != nullptr && !commName->empty()) text += " of communicator '" + *commName + "'";
  return text;
}

}  // namespace loom

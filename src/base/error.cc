#include "base/error.h"

#include <cstring>

namespace loom {

void failSystem(const std::string& what, int err) {
  throw Error(loomSystemError, what + ": " + std::strerror(err) + " (errno " + std::to_string(err) + ")");
}

}  // namespace loom

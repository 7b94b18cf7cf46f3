// What every rank of a communicator must agree on for one collective. Each
// rank publishes its own; a rank left waiting compares it with its peer's,
// so a sentence naming both calls replaces a hang. (A mismatch that never
// makes a rank wait, such as another op on equal counts, goes unseen.)
#pragma once

#include <cstdint>
#include <string>

namespace loom {

struct CollectiveCall {
  uint64_t number = 0;  // the collective's number on this communicator
  char name[16] = {};   // "AllReduce"
  uint64_t count = 0;
  int32_t dtype = 0;
  int32_t op = -1;    // -1: the collective does not reduce
  int32_t root = -1;  // -1: the collective has no root

  bool sameCallAs(const CollectiveCall& other) const;
  // "AllReduce #3 of 1048576 float32 (sum)"
  std::string describe() const;
};

}  // namespace loom

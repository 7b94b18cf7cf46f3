// A set of ranks as a sentence names it: "rank 2", "ranks 0 and 1",
// "ranks 0-3, 5 and 7". Runs of three or more collapse into a range, so a
// job of thousands of ranks with one missing stays one short line.
#pragma once

#include <string>
#include <vector>

namespace loom {

// `ranks` in any order, duplicates allowed; "no rank" when empty.
std::string describeRanks(std::vector<int> ranks);

}  // namespace loom

// Whole numbers read from topology files, without exceptions: std::stoi
// throws std::out_of_range on "4294967296", and an exception other than
// loom::Error escapes the readers without the file and line (loom-topo
// ended in std::terminate; docs/RELIABILITY.md, "Topology input").
#pragma once

#include <optional>
#include <string>

namespace loom::topo {

// Decimal digits only (no sign, no spaces), as hwloc writes its numbers,
// from 0 to INT_MAX; nullopt for anything else.
std::optional<int> parseDecimalInt(const std::string& text);

}  // namespace loom::topo

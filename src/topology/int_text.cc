#include "topology/int_text.h"

#include <climits>

namespace loom::topo {

std::optional<int> parseDecimalInt(const std::string& text) {
  if (text.empty()) return std::nullopt;
  long long value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
    if (value > INT_MAX) return std::nullopt;  // checked per digit: never overflows
  }
  return static_cast<int>(value);
}

}  // namespace loom::topo

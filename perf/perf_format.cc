#include "perf_format.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace loom::perf {

bool parseSize(const std::string& text, size_t* bytes) {
  const char* start = text.c_str();
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(start, &end);
  if (end == start || errno != 0 || !std::isfinite(value) || value < 0) return false;
  while (std::isspace(static_cast<unsigned char>(*end))) ++end;
  double unit = 1;
  switch (*end) {
    case '\0': break;
    case 'K': case 'k': unit = 1024.0; break;
    case 'M': case 'm': unit = 1024.0 * 1024; break;
    case 'G': case 'g': unit = 1024.0 * 1024 * 1024; break;
    default: return false;
  }
  double result = value * unit;
  if (result >= 18446744073709551616.0) return false;  // 2^64: would not fit size_t
  *bytes = static_cast<size_t>(result);
  return true;
}

bool parseInteger(const std::string& text, long* value) {
  const char* start = text.c_str();
  char* end = nullptr;
  errno = 0;
  long parsed = std::strtol(start, &end, 0);
  if (end == start || *end != '\0' || errno != 0) return false;
  *value = parsed;
  return true;
}

std::string fixedWidth(double value, int width) {
  char text[64];
  for (int decimals = 2; decimals >= 0; --decimals)
    if (std::snprintf(text, sizeof(text), "%*.*f", width, decimals, value) <= width) return text;
  std::snprintf(text, sizeof(text), "%*.*e", width, width >= 7 ? 1 : 0, value);
  // As nccl-tests, never wider than the column (its buffer holds width chars).
  return std::string(text).substr(0, width);
}

std::string wrongColumn(bool checked, int64_t wrong) {
  if (!checked) return "   N/A";
  char text[32];
  std::snprintf(text, sizeof(text), "%6g", static_cast<double>(wrong));
  return text;
}

}  // namespace loom::perf

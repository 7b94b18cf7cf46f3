#include "base/env_value.h"

#include <cerrno>
#include <cstdlib>

#include "base/error.h"

namespace loom {

std::optional<std::string> envValue(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || value[0] == '\0') return std::nullopt;
  return std::string(value);
}

int64_t parseEnvInteger(const std::string& text, const char* name, int64_t lo, int64_t hi) {
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || value < lo || value > hi) {
    fail(loomInvalidArgument, std::string(name) + "='" + text + "' is not an integer between " + std::to_string(lo) +
                                  " and " + std::to_string(hi));
  }
  return value;
}

void readSlotBytes(const char* name, size_t* bytes) {
  if (auto text = envValue(name)) *bytes = parseEnvInteger(*text, name, 4096, 64 << 20);
  if (*bytes % 64 != 0)
    fail(loomInvalidArgument, std::string(name) + "=" + std::to_string(*bytes) + " is not a multiple of 64");
}

}  // namespace loom

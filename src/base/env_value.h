// Reading LOOM_* variables, for every layer that owns some (core's
// communicator settings, each transport kind's own): unset and empty are
// the same, and a malformed value fails with a sentence naming the
// variable and the value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace loom {

// The variable's value; nullopt when it is unset or empty.
std::optional<std::string> envValue(const char* name);

// Whole-string decimal integer in [lo, hi]; throws loomInvalidArgument
// naming `name` otherwise.
int64_t parseEnvInteger(const std::string& text, const char* name, int64_t lo, int64_t hi);

// A FIFO slot size from `name`, if set: whole cache lines, 4 KiB to 64 MiB.
// Leaves *bytes alone when unset.
void readSlotBytes(const char* name, size_t* bytes);

}  // namespace loom

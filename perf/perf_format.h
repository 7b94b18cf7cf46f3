// Number parsing and formatting exactly as nccl-tests' scripts see them:
// sizes such as "1.5M" or "1MB", and the fixed-width columns whose
// precision shrinks as the value grows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace loom::perf {

// nccl-tests' size syntax: a number (decimal, fraction or exponent), then
// optionally K, M or G (binary units, either case) of which only the first
// letter counts, so "1MB" is 1 MiB. Returns false for anything else,
// including negative sizes.
bool parseSize(const std::string& text, size_t* bytes);

// nccl-tests' integer flags: strtol base 0 (so 0x10 and 010 are 16 and 8).
// Returns false if `text` is not entirely an integer.
bool parseInteger(const std::string& text, long* value);

// `value` in exactly `width` characters: two decimals if they fit, then one,
// then none, then exponent notation (nccl-tests' time/algbw/busbw columns).
std::string fixedWidth(double value, int width);

// The #wrong column: the count as %6g, or "   N/A" when checking is off.
std::string wrongColumn(bool checked, int64_t wrong);

}  // namespace loom::perf

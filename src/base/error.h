// loom::Error: how failures travel inside Loom. The C API boundary turns one
// into a loomResult_t plus the sentence loomCommGetLastError() returns.
#pragma once

#include <loom/loom.h>

#include <stdexcept>
#include <string>

namespace loom {

class Error : public std::runtime_error {
 public:
  Error(loomResult_t code, std::string sentence) : std::runtime_error(std::move(sentence)), code_(code) {}
  loomResult_t code() const noexcept { return code_; }

 private:
  loomResult_t code_;
};

[[noreturn]] inline void fail(loomResult_t code, std::string sentence) {
  throw Error(code, std::move(sentence));
}

// A failed system call: the sentence names what was being done and errno.
[[noreturn]] void failSystem(const std::string& what, int err);

}  // namespace loom

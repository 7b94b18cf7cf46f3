// A byte buffer whose data() may start at an odd address: collectives must
// work on unaligned user buffers. While a RegisteredArena lives on the
// calling thread, Buffers take their memory from it, so the same checks run
// on registered memory (loomCommRegister) as on ordinary heap memory.
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace loom::test {

// loomMemAlloc memory registered with a communicator, handed out as a stack:
// its top goes back to the start once every Buffer taken from it is gone.
// Constructing and destroying it are collective over `comm`.
class RegisteredArena {
 public:
  RegisteredArena(loomComm_t comm, size_t bytes) : comm_(comm), bytes_(bytes) {
    if (loomMemAlloc(&memory_, bytes) != loomSuccess)
      throw std::runtime_error(std::string("loomMemAlloc failed: ") + loomGetLastError());
    if (loomCommRegister(comm, memory_, bytes, &handle_) != loomSuccess)
      throw std::runtime_error(std::string("loomCommRegister failed: ") + loomCommGetLastError(comm));
    previous_ = current();
    current() = this;
  }
  ~RegisteredArena() {
    current() = previous_;
    loomCommDeregister(comm_, handle_);
    loomMemFree(memory_);
  }
  RegisteredArena(const RegisteredArena&) = delete;
  RegisteredArena& operator=(const RegisteredArena&) = delete;

  static RegisteredArena*& current() {
    thread_local RegisteredArena* arena = nullptr;
    return arena;
  }
  unsigned char* take(size_t bytes) {
    if (bytes > bytes_ - top_)
      throw std::runtime_error("RegisteredArena of " + std::to_string(bytes_) + " bytes is too small");
    unsigned char* start = static_cast<unsigned char*>(memory_) + top_;
    top_ += (bytes + 63) / 64 * 64;
    ++live_;
    return start;
  }
  void giveBack() {
    if (--live_ == 0) top_ = 0;
  }
  void* handle() const { return handle_; }

 private:
  loomComm_t comm_;
  size_t bytes_;
  void* memory_ = nullptr;
  void* handle_ = nullptr;
  size_t top_ = 0;
  int live_ = 0;
  RegisteredArena* previous_ = nullptr;
};

class Buffer {
 public:
  Buffer(size_t bytes, size_t misalign) : offset_(misalign), bytes_(bytes) {
    const size_t whole = bytes + misalign + 1;
    if (RegisteredArena* arena = RegisteredArena::current()) {
      arena_ = arena;
      base_ = arena->take(whole);
    } else {
      storage_.reset(new unsigned char[whole]);  // not zeroed: poisoned below
      base_ = storage_.get();
    }
    std::memset(base_, 0xEE, whole);
  }
  template <typename Bytes>
  Buffer(const Bytes& contents, size_t misalign) : Buffer(contents.size(), misalign) {
    if (!contents.empty()) std::memcpy(data(), contents.data(), contents.size());
  }
  ~Buffer() {
    if (arena_ != nullptr) arena_->giveBack();
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  unsigned char* data() { return base_ + offset_; }
  size_t size() const { return bytes_; }

 private:
  std::unique_ptr<unsigned char[]> storage_;
  RegisteredArena* arena_ = nullptr;
  unsigned char* base_ = nullptr;
  size_t offset_;
  size_t bytes_;
};

}  // namespace loom::test

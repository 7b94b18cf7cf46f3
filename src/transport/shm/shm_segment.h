// A POSIX shared-memory segment mapped into this process. The creator
// unlinks the name once every peer has mapped it, so a crash afterwards
// leaves nothing behind in /dev/shm.
#pragma once

#include <cstddef>
#include <string>

namespace loom::shm {

class ShmSegment {
 public:
  static ShmSegment create(const std::string& name, size_t bytes);
  static ShmSegment open(const std::string& name, size_t bytes);

  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&&) = delete;
  ShmSegment(const ShmSegment&) = delete;
  ~ShmSegment();

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  const std::string& name() const { return name_; }
  void unlink();

 private:
  ShmSegment(std::string name, void* data, size_t bytes, bool owner)
      : name_(std::move(name)), data_(data), bytes_(bytes), linked_(owner) {}
  std::string name_;
  void* data_;
  size_t bytes_;
  bool linked_;  // this process created the name and has not unlinked it yet
};

}  // namespace loom::shm

// A byte buffer whose data() may start at an odd address: collectives must
// work on unaligned user buffers.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

namespace loom::test {

class Buffer {
 public:
  Buffer(size_t bytes, size_t misalign) : storage_(bytes + misalign + 1, 0xEE), offset_(misalign), bytes_(bytes) {}
  template <typename Bytes>
  Buffer(const Bytes& contents, size_t misalign) : Buffer(contents.size(), misalign) {
    if (!contents.empty()) std::memcpy(data(), contents.data(), contents.size());
  }
  unsigned char* data() { return storage_.data() + offset_; }
  size_t size() const { return bytes_; }

 private:
  std::vector<unsigned char> storage_;
  size_t offset_;
  size_t bytes_;
};

}  // namespace loom::test

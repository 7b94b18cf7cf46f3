// A shared-memory segment: an anonymous memory file (memfd) mapped into this
// process. It has no name anywhere: the creator keeps the file open until
// every peer has opened it through /proc/<pid>/fd/<fd>, then closes it, and
// from then on only the mappings hold the memory. They go with the processes
// however those end (kill -9 included), so nothing can be left behind in
// /dev/shm, at init or later.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace loom::shm {

// Where a peer finds a segment; device and inode let it check that the file
// it opened is the one meant (a pid of another pid namespace is not).
struct SegmentAddress {
  pid_t pid = 0;
  int fd = -1;
  uint64_t device = 0;
  uint64_t inode = 0;
};

class ShmSegment {
 public:
  // `label` shows in /proc/<pid>/fd and /proc/<pid>/maps ("loom-r3").
  static ShmSegment create(const std::string& label, size_t bytes);
  // Maps a peer's segment; `owner` names that peer in sentences.
  static ShmSegment open(const SegmentAddress& address, size_t bytes, const std::string& owner);

  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&&) = delete;
  ShmSegment(const ShmSegment&) = delete;
  ~ShmSegment();

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  // Valid until closeFile().
  SegmentAddress address() const;
  // Once every peer has opened the segment: the mapping alone holds it.
  void closeFile();

 private:
  ShmSegment(int fd, void* data, size_t bytes) : fd_(fd), data_(data), bytes_(bytes) {}
  int fd_;  // the creator's open file until closeFile(); -1 otherwise
  void* data_;
  size_t bytes_;
};

}  // namespace loom::shm

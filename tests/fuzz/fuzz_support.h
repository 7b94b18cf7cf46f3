// Shared by the libFuzzer targets: quiet logging, and a file that holds the
// current input for readers that only take a path.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace loom::fuzz {

// Call first in LLVMFuzzerInitialize: the readers log a WARN line for each
// accepted oddity, which would fill stderr and slow every run.
inline void quietLogging() { setenv("LOOM_DEBUG", "NONE", 1); }

// An anonymous in-memory file (memfd) reachable by path as /proc/self/fd/N:
// libxml2 and hwloc open it by name as they would a user's file, and no
// input ever touches the disk.
class InputFile {
 public:
  InputFile() {
    fd_ = memfd_create("loom-fuzz-input", MFD_CLOEXEC);
    if (fd_ < 0) std::abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  const std::string& write(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace loom::fuzz

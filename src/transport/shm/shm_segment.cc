#include "transport/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/error.h"

namespace loom::shm {
namespace {

void* mapFd(int fd, size_t bytes, const std::string& name) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) failSystem("cannot map shared memory segment " + name, errno);
  return data;
}

}  // namespace

ShmSegment ShmSegment::create(const std::string& name, size_t bytes) {
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) failSystem("cannot create shared memory segment " + name, errno);
  // posix_fallocate rather than ftruncate: a full /dev/shm fails here with
  // ENOSPC instead of SIGBUS on first touch, deep inside a collective.
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (rc != 0) {
    close(fd);
    shm_unlink(name.c_str());
    failSystem("cannot size shared memory segment " + name + " to " + std::to_string(bytes) +
                   " bytes (is /dev/shm too small? see LOOM_SHM_SLOT_BYTES)",
               rc);
  }
  void* data = nullptr;
  try {
    data = mapFd(fd, bytes, name);
  } catch (...) {
    close(fd);
    shm_unlink(name.c_str());
    throw;
  }
  close(fd);
  return ShmSegment(name, data, bytes, true);
}

ShmSegment ShmSegment::open(const std::string& name, size_t bytes) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) failSystem("cannot open a peer's shared memory segment " + name, errno);
  struct stat info {};
  if (fstat(fd, &info) != 0 || static_cast<size_t>(info.st_size) < bytes) {
    close(fd);
    fail(loomRemoteError, "the peer's shared memory segment " + name + " is smaller than the " + std::to_string(bytes) +
                              " bytes expected (peers disagree on LOOM_SHM_*?)");
  }
  void* data = nullptr;
  try {
    data = mapFd(fd, bytes, name);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  return ShmSegment(name, data, bytes, false);
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : name_(std::move(other.name_)), data_(other.data_), bytes_(other.bytes_), linked_(other.linked_) {
  other.data_ = nullptr;
  other.linked_ = false;
}

ShmSegment::~ShmSegment() {
  if (linked_) shm_unlink(name_.c_str());
  if (data_ != nullptr) munmap(data_, bytes_);
}

void ShmSegment::unlink() {
  if (linked_) shm_unlink(name_.c_str());
  linked_ = false;
}

}  // namespace loom::shm

#include "transport/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/error.h"
#include "transport/shm/peer_file.h"

namespace loom::shm {
namespace {

void* mapFd(int fd, size_t bytes, const std::string& what) {
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) failSystem("cannot map " + what, errno);
  return data;
}

}  // namespace

ShmSegment ShmSegment::create(const std::string& label, size_t bytes) {
  int fd = memfd_create(label.c_str(), MFD_CLOEXEC);
  if (fd < 0) failSystem("cannot create a shared memory file (memfd_create)", errno);
  // posix_fallocate rather than ftruncate: memory that is not there fails
  // here with ENOSPC instead of SIGBUS on first touch, deep inside a collective.
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (rc != 0) {
    close(fd);
    failSystem("cannot size a shared memory file to " + std::to_string(bytes) +
                   " bytes (is memory short? see LOOM_SHM_SLOT_BYTES and LOOM_SHM_SLOTS)",
               rc);
  }
  try {
    return ShmSegment(fd, mapFd(fd, bytes, "a shared memory file of " + std::to_string(bytes) + " bytes"), bytes);
  } catch (...) {
    close(fd);
    throw;
  }
}

ShmSegment ShmSegment::open(const SegmentAddress& address, size_t bytes, const std::string& owner) {
  struct stat info {};
  std::string why;
  int err = 0;
  int fd = openPeerFile({address.pid, address.fd, address.device, address.inode}, &info, &why, &err);
  if (fd < 0 && err != 0)
    failSystem("the shared memory of " + owner + ": " + why +
                   " (ranks that share a host must run as the same user in one pid namespace; give the others "
                   "another LOOM_HOST_ID)",
               err);
  if (fd < 0)
    fail(loomRemoteError, "the shared memory of " + owner + ": " + why + "; give that rank another LOOM_HOST_ID");
  if (static_cast<size_t>(info.st_size) < bytes) {
    close(fd);
    fail(loomRemoteError, "the shared memory of " + owner + " holds " + std::to_string(info.st_size) +
                              " bytes, not the " + std::to_string(bytes) + " expected (peers disagree on LOOM_SHM_*?)");
  }
  void* data = nullptr;
  try {
    data = mapFd(fd, bytes, "the shared memory of " + owner);
  } catch (...) {
    close(fd);
    throw;
  }
  close(fd);
  return ShmSegment(-1, data, bytes);
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept : fd_(other.fd_), data_(other.data_), bytes_(other.bytes_) {
  other.fd_ = -1;
  other.data_ = nullptr;
}

ShmSegment::~ShmSegment() {
  closeFile();
  if (data_ != nullptr) munmap(data_, bytes_);
}

SegmentAddress ShmSegment::address() const {
  struct stat info {};
  if (fd_ < 0 || fstat(fd_, &info) != 0) return {};
  return {getpid(), fd_, static_cast<uint64_t>(info.st_dev), static_cast<uint64_t>(info.st_ino)};
}

void ShmSegment::closeFile() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace loom::shm

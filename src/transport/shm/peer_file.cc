#include "transport/shm/peer_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace loom::shm {

int openPeerFile(const PeerFile& file, struct stat* status, std::string* why, int* errnoOut) {
  const std::string path = "/proc/" + std::to_string(file.pid) + "/fd/" + std::to_string(file.fd);
  *errnoOut = 0;
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *errnoOut = errno;
    *why = "cannot open " + path;
    return -1;
  }
  if (fstat(fd, status) != 0 || static_cast<uint64_t>(status->st_dev) != file.device ||
      static_cast<uint64_t>(status->st_ino) != file.inode) {
    close(fd);
    *why = path + " is not the file that process shared (is it in another pid namespace?)";
    return -1;
  }
  return fd;
}

}  // namespace loom::shm

// Opening a file another process of this host holds open (a memfd): through
// /proc/<pid>/fd/<fd>, then checked by device and inode, since a pid of
// another pid namespace may name some other process here. Shared-memory
// segments and registered windows both reach their peers' memory this way.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <string>

namespace loom::shm {

struct PeerFile {
  pid_t pid;
  int fd;
  uint64_t device;
  uint64_t inode;
};

// An open descriptor (O_RDWR, close-on-exec) and the file's status, or -1
// with *why saying what failed (`errnoOut` set when a system call did).
int openPeerFile(const PeerFile& file, struct stat* status, std::string* why, int* errnoOut);

}  // namespace loom::shm

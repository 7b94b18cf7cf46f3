#include "transport/tcp/tcp_buffers.h"

#include <sys/socket.h>

#include <fstream>
#include <string>

#include "base/logging.h"

namespace loom::tcp {
namespace {

std::string sizeText(long bytes) {
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// Linux reports twice what a process set (it counts its own bookkeeping).
long bufferOf(int fd, int option) {
  int bytes = 0;
  socklen_t length = sizeof(bytes);
  if (getsockopt(fd, SOL_SOCKET, option, &bytes, &length) != 0) return -1;
  return bytes / 2;
}

// The autotuning limit: the third of net.ipv4.tcp_wmem's three numbers.
std::string autotuningLimit(const char* sysctl) {
  std::ifstream file(std::string("/proc/sys/net/ipv4/") + sysctl);
  long least = 0, initial = 0, most = 0;
  if (!(file >> least >> initial >> most) || most <= 0) return "";
  return sizeText(most);
}

}  // namespace

void reportSocketBuffers(int rank, int fd, int requested) {
  const long send = bufferOf(fd, SO_SNDBUF), receive = bufferOf(fd, SO_RCVBUF);
  if (requested == 0) {
    const std::string sendMost = autotuningLimit("tcp_wmem"), receiveMost = autotuningLimit("tcp_rmem");
    LOOM_INFO("INIT", rank,
              "TCP: socket buffers sized by the kernel as traffic grows"
                  << (sendMost.empty() || receiveMost.empty() ? std::string()
                                                              : " (up to " + sendMost + " to send, " + receiveMost +
                                                                    " to receive: net.ipv4.tcp_wmem, "
                                                                    "tcp_rmem)")
                  << "; LOOM_SOCKET_BUFFER_BYTES unset");
    return;
  }
  if (send < requested || receive < requested) {
    LOOM_WARN("TCP", rank,
              "LOOM_SOCKET_BUFFER_BYTES=" << requested << " asks for TCP socket buffers of " << sizeText(requested)
                                          << ", but the kernel gave " << sizeText(send) << " to send and "
                                          << sizeText(receive)
                                          << " to receive: net.core.wmem_max and net.core.rmem_max cap what a "
                                             "process may set (raise them with sysctl, or unset "
                                             "LOOM_SOCKET_BUFFER_BYTES to let the kernel size them as traffic grows)");
    return;
  }
  LOOM_INFO("INIT", rank, "TCP: socket buffers of " << sizeText(requested) << " each way (LOOM_SOCKET_BUFFER_BYTES)");
}

}  // namespace loom::tcp

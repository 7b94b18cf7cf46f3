#include "messages.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace loom::tools::loomrun {

void writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return;
    }
    data.remove_prefix(static_cast<std::size_t>(written));
  }
}

void report(std::string_view message) {
  std::string line = "loomrun: ";
  line += message;
  line += '\n';
  writeAll(STDERR_FILENO, line);
}

void throwErrno(const std::string& what) {
  throw LaunchError(what + ": " + std::strerror(errno));
}

std::string joinRanks(const std::vector<int>& ranks) {
  std::string joined;
  for (const int rank : ranks) {
    if (!joined.empty()) joined += ',';
    joined += std::to_string(rank);
  }
  return joined;
}

}  // namespace loom::tools::loomrun

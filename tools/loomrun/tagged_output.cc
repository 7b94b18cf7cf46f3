#include "tagged_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "messages.h"

namespace loom::tools::loomrun {
namespace {

// Writes every complete line with its prefix in one write() call, so lines
// from different ranks interleave only at line boundaries.
void forwardCompleteLines(TaggedStream& stream) {
  std::string tagged;
  std::size_t start = 0;
  for (std::size_t newline; (newline = stream.partial.find('\n', start)) != std::string::npos; start = newline + 1) {
    tagged += stream.prefix;
    tagged.append(stream.partial, start, newline + 1 - start);
  }
  stream.partial.erase(0, start);
  if (stream.partial.size() >= kMaxBufferedLine) {
    tagged += stream.prefix + stream.partial + '\n';
    stream.partial.clear();
  }
  writeAll(stream.destination, tagged);
}

}  // namespace

bool readAvailable(TaggedStream& stream) {
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::read(stream.readFd, buffer, sizeof(buffer));
    if (got > 0) {
      stream.partial.append(buffer, static_cast<std::size_t>(got));
      forwardCompleteLines(stream);
      continue;
    }
    if (got == 0) return false;
    if (errno == EINTR) continue;
    // EAGAIN: drained for now. Any other error: treat the stream as ended.
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

void finishStream(TaggedStream& stream) {
  if (stream.readFd < 0) return;
  readAvailable(stream);
  if (!stream.partial.empty()) {
    writeAll(stream.destination, stream.prefix + stream.partial + '\n');
    stream.partial.clear();
  }
  ::close(stream.readFd);
  stream.readFd = -1;
}

Pipe makeOutputPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throwErrno("cannot create a pipe for --tag-output");
  // Only our end is non-blocking; the rank's writes must block as usual.
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
  return {fds[0], fds[1]};
}

void raiseFileLimitFor(std::size_t descriptorsNeeded, const rlimit& current) {
  if (current.rlim_cur == RLIM_INFINITY || current.rlim_cur >= descriptorsNeeded) return;
  rlimit raised = current;
  raised.rlim_cur = current.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &raised);
}

}  // namespace loom::tools::loomrun

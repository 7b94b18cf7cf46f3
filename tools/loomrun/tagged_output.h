// --tag-output: each rank's stdout and stderr go through a pipe of their
// own, and loomrun forwards them line by line with a "[RANK] " prefix, each
// line in one write(), so lines from different ranks interleave only at
// line boundaries and every line names the rank that wrote it.
#pragma once

#include <sys/resource.h>

#include <cstddef>
#include <string>

namespace loom::tools::loomrun {

// A rank printing megabytes without a newline would otherwise grow its line
// buffer without bound; past this size the partial line is emitted as is.
constexpr std::size_t kMaxBufferedLine = std::size_t{1} << 20;

struct TaggedStream {
  int readFd = -1;       // our end of the rank's pipe; -1 once closed
  int destination = -1;  // loomrun's own stdout or stderr
  std::string prefix;    // "[3] "
  std::string partial;   // text after the last newline seen so far
};

// Reads what the pipe holds right now and forwards the complete lines.
// Returns false at end of file.
bool readAvailable(TaggedStream& stream);

// Called at end of file or when the rank has exited: whatever the rank wrote
// is in the pipe by then, so drain it and print an unfinished last line too.
// Later writes by leftover grandchildren are not waited for, so they cannot
// keep loomrun alive. Closes the stream; does nothing if it is closed.
void finishStream(TaggedStream& stream);

struct Pipe {
  int readFd;
  int writeFd;
};

// Close-on-exec on both ends so that no rank inherits another rank's pipes;
// dup2 onto stdout/stderr clears the flag on the copies the rank keeps.
// Only our (read) end is non-blocking. Throws LaunchError.
Pipe makeOutputPipe();

// --tag-output keeps two pipes per rank open, more than the usual soft limit
// of 1024 descriptors allows for large N; the hard limit is normally ample.
void raiseFileLimitFor(std::size_t descriptorsNeeded, const rlimit& current);

}  // namespace loom::tools::loomrun

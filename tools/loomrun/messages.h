// What loomrun itself says, and how: every message is one "loomrun: ..."
// line written with one write(), so it never mixes with the ranks' output;
// and the error a failed system call becomes while the job is set up.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace loom::tools::loomrun {

// Writes everything or gives up silently: if our own stdout/stderr is gone
// there is nowhere left to report the problem.
void writeAll(int fd, std::string_view data);

// One write per message so that lines from loomrun and the ranks never mix.
void report(std::string_view message);

// A failed system call while setting the job up; the message names the call.
struct LaunchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws LaunchError("<what>: <strerror(errno)>").
[[noreturn]] void throwErrno(const std::string& what);

// "0,1,3", as the messages name ranks.
std::string joinRanks(const std::vector<int>& ranks);

}  // namespace loom::tools::loomrun

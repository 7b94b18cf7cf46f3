// How loomrun and its ranks end, in the numbers and words a shell uses:
// loomrun's own exit codes, a rank's wait status as $? would show it, and
// signal names for messages. One place, so that --help's "Exit status"
// paragraph and the code cannot drift apart.
#pragma once

#include <string>

namespace loom::tools::loomrun {

constexpr int kExitLaunchError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitTimeout = 124;
constexpr int kExitCannotRun = 127;

// "SIGSEGV (Segmentation fault)": the abbreviation is what people grep for,
// the description is what they understand.
std::string describeSignal(int signalNumber);

// The same number a shell would report for the process.
int shellStatus(int waitStatus);

bool exitedCleanly(int waitStatus);

}  // namespace loom::tools::loomrun

#include "exit_status.h"

#include <sys/wait.h>

#include <cstring>

namespace loom::tools::loomrun {

std::string describeSignal(int signalNumber) {
  std::string name;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  if (const char* abbreviation = sigabbrev_np(signalNumber)) {
    name = std::string("SIG") + abbreviation;
  }
#endif
  if (name.empty()) name = "signal " + std::to_string(signalNumber);
  if (const char* description = strsignal(signalNumber)) {
    name += std::string(" (") + description + ")";
  }
  return name;
}

int shellStatus(int waitStatus) {
  if (WIFEXITED(waitStatus)) return WEXITSTATUS(waitStatus);
  if (WIFSIGNALED(waitStatus)) return 128 + WTERMSIG(waitStatus);
  return 1;
}

bool exitedCleanly(int waitStatus) {
  return WIFEXITED(waitStatus) && WEXITSTATUS(waitStatus) == 0;
}

}  // namespace loom::tools::loomrun

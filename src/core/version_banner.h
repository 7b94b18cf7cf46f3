// The one line that says which Loom this is: what LOOM_DEBUG=VERSION prints,
// the first INFO line of a process, and what the tools' --version show.
#pragma once

#include <string>

namespace loom {

// "Loom version 0.1.0 (RelWithDebInfo build, GNU 12.2.0, transports: shm,tcp,
// sanitizers: none; hwloc 2.9.0)".
std::string versionBanner();

}  // namespace loom

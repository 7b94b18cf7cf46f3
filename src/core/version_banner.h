// The one line that says which Loom this is: what LOOM_DEBUG=VERSION prints,
// the first INFO line of a process, and what the tools' --version show.
#pragma once

#include <string>

namespace loom {

// "Loom version 0.1.0 (RelWithDebInfo build, GNU 12.2.0, transports: shm,tcp,
// sanitizers: none; hwloc 2.9.0)".
std::string versionBanner();

// Hands the banner and core/config.h's list of LOOM_* variables to the
// logger below (base/logging.h). Done as the library loads; communicator
// init calls it too, which also links this file into static builds.
void installStartupLines();

}  // namespace loom

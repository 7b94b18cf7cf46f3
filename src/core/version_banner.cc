#include "core/version_banner.h"

#include <loom/version.h>

#include "base/logging.h"
#include "core/build_info.h"
#include "core/config.h"
#include "topology/hwloc_import.h"

namespace loom {

std::string versionBanner() {
  return std::string("Loom version ") + LOOM_VERSION_STRING + " (" + LOOM_BUILD_TYPE + " build, " +
         LOOM_BUILD_COMPILER + ", transports: " + LOOM_BUILD_TRANSPORTS + ", sanitizers: " + LOOM_BUILD_SANITIZERS +
         "; hwloc " + topo::hwlocRuntimeVersion() + ")";
}

void installStartupLines() {
  installLogStartup({versionBanner, loomVariablesForLog});
}

namespace {
// A line logged before any communicator exists (a unique id's, loom-topo's)
// is the process's first too.
const bool kInstalledAtLoad = (installStartupLines(), true);
}  // namespace

}  // namespace loom

#include "core/version_banner.h"

#include <loom/version.h>

#include "core/build_info.h"
#include "topology/hwloc_import.h"

namespace loom {

std::string versionBanner() {
  return std::string("Loom version ") + LOOM_VERSION_STRING + " (" + LOOM_BUILD_TYPE + " build, " +
         LOOM_BUILD_COMPILER + ", transports: " + LOOM_BUILD_TRANSPORTS + ", sanitizers: " + LOOM_BUILD_SANITIZERS +
         "; hwloc " + topo::hwlocRuntimeVersion() + ")";
}

}  // namespace loom

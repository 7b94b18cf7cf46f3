// loom-topo --calibrate: measures the cost model's constants for shared
// memory on this machine and writes them as a tuning file
// (collectives/tuning_file.h) that LOOM_TUNING_FILE loads.
#pragma once

#include <ostream>
#include <string>

namespace loom::topo {

// Runs `ranks` processes of this host (forked), each AllReduce and
// AllGather schedule the model weighs at a small size and four large ones,
// fits the constants, prints what it measured and fitted to `report`, and
// writes the file to `outPath`. Throws Error with a sentence on failure.
void calibrate(std::ostream& report, int ranks, const std::string& outPath);

}  // namespace loom::topo

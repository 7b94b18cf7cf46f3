// The perf harness shared by every *_perf binary: launch, sweep, timing,
// checking and the nccl-tests table.
#pragma once

#include "collective_spec.h"

namespace loom::perf {

// Returns the process exit status: 0 only if every value was right.
int runPerf(const CollectiveSpec& spec, const char* program, int argc, char** argv);

}  // namespace loom::perf

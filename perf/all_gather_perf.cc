#include "perf_runner.h"

int main(int argc, char** argv) {
  return loom::perf::runPerf(loom::perf::allGatherSpec(), "all_gather_perf", argc, argv);
}

#include "perf_runner.h"

int main(int argc, char** argv) {
  return loom::perf::runPerf(loom::perf::allReduceSpec(), "all_reduce_perf", argc, argv);
}

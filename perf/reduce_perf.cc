#include "perf_runner.h"

int main(int argc, char** argv) {
  return loom::perf::runPerf(loom::perf::reduceSpec(), "reduce_perf", argc, argv);
}

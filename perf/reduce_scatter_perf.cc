#include "perf_runner.h"

int main(int argc, char** argv) {
  return loom::perf::runPerf(loom::perf::reduceScatterSpec(), "reduce_scatter_perf", argc, argv);
}

#include "perf_runner.h"

int main(int argc, char** argv) {
  return loom::perf::runPerf(loom::perf::allToAllSpec(), "alltoall_perf", argc, argv);
}

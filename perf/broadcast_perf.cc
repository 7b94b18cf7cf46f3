#include "perf_runner.h"

int main(int argc, char** argv) {
  return loom::perf::runPerf(loom::perf::broadcastSpec(), "broadcast_perf", argc, argv);
}

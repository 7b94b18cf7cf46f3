// One rank, one AllReduce through the installed headers and library.
#include <cstdio>
#include <loom/loom.hpp>
#include <vector>

int main() {
  loom::Comm comm(1, loom::Comm::uniqueId(), 0);
  std::vector<float> v(5, 2.0f);
  comm.allReduce(std::span(v), loomProd);
  std::printf("consumer: %g\n", v[0]);
  return v[0] == 2.0f ? 0 : 1;
}

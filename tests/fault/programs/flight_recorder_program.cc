// Run by flight_recorder_test.sh under loomrun -n 2 with
// LOOM_DUMP_ON_SIGNAL=USR1: a few operations, then SIGUSR1 to itself (the
// flight recorder is printed and the process runs on), another AllReduce,
// then a mismatched one (its failure prints the recorder again). Exits 0
// when every call returned what it should.
#include <loom/loom.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "flight_recorder_program: %s\n", what);
  ++failures;
}

}  // namespace

int main() {
  loomComm_t comm = nullptr;
  if (loomCommInitFromEnv(&comm, nullptr) != loomSuccess) {
    std::fprintf(stderr, "flight_recorder_program: init failed: %s\n", loomGetLastError());
    return 2;
  }
  int rank = 0, nranks = 0;
  loomCommUserRank(comm, &rank);
  loomCommCount(comm, &nranks);

  std::vector<float> in(1000, 1.0f), out(1000);
  expect(loomAllReduce(in.data(), out.data(), in.size(), loomFloat32, loomSum, comm, nullptr, nullptr) == loomSuccess,
         "first AllReduce failed");
  std::vector<int> send(10, rank), recv(10, -1);
  loomGroupStart();
  loomSend(send.data(), send.size(), loomInt32, (rank + 1) % nranks, comm, nullptr, nullptr);
  loomRecv(recv.data(), recv.size(), loomInt32, (rank + nranks - 1) % nranks, comm, nullptr, nullptr);
  expect(loomGroupEnd() == loomSuccess, "Send/Recv failed");

  raise(SIGUSR1);  // prints the recorder from Loom's dump thread
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  expect(loomAllReduce(in.data(), out.data(), in.size(), loomFloat32, loomSum, comm, nullptr, nullptr) == loomSuccess,
         "AllReduce after the signal failed");
  expect(out[0] == static_cast<float>(nranks), "AllReduce after the signal got a wrong sum");

  // Rank 0 passes one element fewer: both fail, and each prints its recorder.
  const size_t count = rank == 0 ? 5 : 6;
  expect(loomAllReduce(in.data(), out.data(), count, loomFloat32, loomSum, comm, nullptr, nullptr) == loomInvalidUsage,
         "the mismatched AllReduce did not fail with loomInvalidUsage");
  // The communicator has failed: later calls are refused at once, and only
  // the first refusal is a WARN line.
  for (int call = 0; call < 2; ++call)
    expect(loomBarrier(comm, nullptr) == loomInvalidUsage, "a Barrier after the failure was not refused");
  loomCommDestroy(comm);
  return failures == 0 ? 0 : 1;
}

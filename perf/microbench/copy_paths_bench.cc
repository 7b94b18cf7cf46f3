// What one byte costs on each way a rank can get a peer's data on one host:
// a plain memcpy (the FIFO path copies twice: into a slot, out of it) against
// the kernel's cross-memory attach (process_vm_readv, one copy, LOOM_CMA=1),
// with the peer's buffer on 4 KiB pages and on transparent huge pages.
// docs/PERF.md quotes it: on a VM, process_vm_readv pays per 4 KiB page.
//
//   build/perf/copy_paths_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace {

constexpr size_t kHugePage = 2u << 20;

void* allocate(size_t bytes, bool hugePages) {
  void* p = nullptr;
  if (posix_memalign(&p, kHugePage, bytes) != 0) std::abort();
  if (hugePages) madvise(p, bytes, MADV_HUGEPAGE);
  std::memset(p, 1, bytes);  // fault every page in now, not while timing
  return p;
}

// A child process that owns a filled buffer and waits; its address comes
// back through a pipe, its memory is read with process_vm_readv.
class PeerProcess {
 public:
  PeerProcess(size_t bytes, bool hugePages) {
    int address[2], done[2];
    if (pipe(address) != 0 || pipe(done) != 0) std::abort();
    pid_ = fork();
    if (pid_ == 0) {
      close(address[0]);
      close(done[1]);  // else the read below never sees the parent close it
      void* buffer = allocate(bytes, hugePages);
      if (write(address[1], &buffer, sizeof(buffer)) != sizeof(buffer)) _exit(1);
      char byte;
      (void)!read(done[0], &byte, 1);
      _exit(0);
    }
    close(address[1]);
    close(done[0]);
    if (read(address[0], &remote_, sizeof(remote_)) != sizeof(remote_)) std::abort();
    close(address[0]);
    done_ = done[1];
  }
  ~PeerProcess() {
    close(done_);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  void* remote() const { return remote_; }

 private:
  pid_t pid_;
  int done_;
  void* remote_ = nullptr;
};

void Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  void* from = allocate(bytes, state.range(1) != 0);
  void* to = allocate(bytes, state.range(1) != 0);
  for (auto _ : state) {
    std::memcpy(to, from, bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  std::free(from);
  std::free(to);
}

void ProcessVmReadv(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  const bool huge = state.range(1) != 0;
  PeerProcess peer(bytes, huge);
  void* to = allocate(bytes, huge);
  for (auto _ : state) {
    iovec local{to, bytes}, remote{peer.remote(), bytes};
    if (process_vm_readv(peer.pid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(bytes)) {
      state.SkipWithError("process_vm_readv failed (ptrace restricted?)");
      break;
    }
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  std::free(to);
}

// Sizes: in L2, in L3, beyond it; second argument 1 = transparent huge pages.
void Sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"bytes", "thp"});
  for (int64_t huge : {0, 1})
    for (int64_t bytes : {256 << 10, 4 << 20, 64 << 20}) b->Args({bytes, huge});
}

BENCHMARK(Memcpy)->Apply(Sizes);
BENCHMARK(ProcessVmReadv)->Apply(Sizes);

}  // namespace

BENCHMARK_MAIN();

#include "loom_topo/numa_measure.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

namespace loom::topo::detail {

namespace {

using Clock = std::chrono::steady_clock;

void pinTo(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

template <typename F>
void runPinned(int cpu, F body) {
  std::thread th([&] {
    pinTo(cpu);
    body();
  });
  th.join();
}

double seconds(Clock::time_point from) {
  return std::chrono::duration<double>(Clock::now() - from).count();
}

}  // namespace

std::set<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::set<int> out;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &set)) out.insert(c);
  return out;
}

MemoryResult measureMemory(int readerCpu, int memCpu, size_t bytes) {
  size_t n = bytes / sizeof(uint64_t);
  std::vector<uint64_t> buf;
  // First touch on memCpu places the pages on its NUMA node. The buffer is a
  // random cycle of indexes, so the same pages serve both measurements.
  runPinned(memCpu, [&] {
    buf.resize(n);
    std::vector<uint64_t> order(n / 8);  // one hop per cache line
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin() + 1, order.end(), std::mt19937_64(42));
    for (size_t i = 0; i < order.size(); i++) buf[order[i] * 8] = order[(i + 1) % order.size()] * 8;
  });
  MemoryResult r;
  runPinned(readerCpu, [&] {
    volatile uint64_t sink = 0;
    double best = 1e9;
    for (int pass = 0; pass < 3; pass++) {
      auto t0 = Clock::now();
      uint64_t sum = 0;
      for (size_t i = 0; i < n; i++) sum += buf[i];
      sink = sum;
      best = std::min(best, seconds(t0));
    }
    r.bandwidthGBs = bytes / best / 1e9;
    const size_t hops = std::min<size_t>(n / 8, 1u << 20);
    uint64_t at = 0;
    auto t0 = Clock::now();
    for (size_t i = 0; i < hops; i++) at = buf[at];
    sink = at;
    r.latencyNs = seconds(t0) / hops * 1e9;
    (void)sink;
  });
  return r;
}

double measurePingPong(int cpuA, int cpuB, int rounds) {
  alignas(64) std::atomic<int> ball{0};
  auto player = [&](int cpu, int mine, int next) {
    pinTo(cpu);
    for (int i = 0; i < rounds; i++) {
      while (ball.load(std::memory_order_acquire) != mine) {
      }
      ball.store(next, std::memory_order_release);
    }
  };
  auto t0 = Clock::now();
  std::thread b(player, cpuB, 1, 0);
  std::thread a(player, cpuA, 0, 1);
  a.join();
  b.join();
  return seconds(t0) / (2.0 * rounds) * 1e9;
}

double measureCopyBytesPerUs(const std::vector<int>& cpus, size_t bytes, int sourceCpu) {
  const int threads = static_cast<int>(cpus.size());
  constexpr int kRounds = 3, kPasses = 4;
  std::atomic<int> ready{0}, done{0};
  std::atomic<int> round{-1};
  std::vector<std::thread> copiers;
  for (int t = 0; t < threads; ++t) {
    copiers.emplace_back([&, t] {
      pinTo(sourceCpu >= 0 ? sourceCpu : cpus[t]);
      std::vector<char> from(bytes, 1);  // first touched here: that CPU's NUMA node
      pinTo(cpus[t]);
      std::vector<char> to(bytes, 0);
      ready.fetch_add(1);
      for (int r = 0; r < kRounds; ++r) {
        while (round.load(std::memory_order_acquire) < r) std::this_thread::yield();
        for (int pass = 0; pass < kPasses; ++pass) std::copy(from.begin(), from.end(), to.begin());
        done.fetch_add(1, std::memory_order_acq_rel);
      }
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  double best = 1e30;
  for (int r = 0; r < kRounds; ++r) {
    const auto start = Clock::now();
    round.store(r, std::memory_order_release);
    while (done.load(std::memory_order_acquire) < threads * (r + 1)) std::this_thread::yield();
    best = std::min(best, seconds(start));
  }
  for (std::thread& copier : copiers) copier.join();
  return static_cast<double>(threads) * kPasses * static_cast<double>(bytes) / (best * 1e6);
}

}  // namespace loom::topo::detail

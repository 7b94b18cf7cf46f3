#include "perf_buffers.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "perf_options.h"

namespace loom::perf {

size_t lastLevelCacheBytes() {
  // One instance is what a rank's working set competes for, and one is
  // rarely above 64 MiB (96 on parts with stacked cache), so that is the
  // most either source is believed: VMs report the whole socket's (480 and
  // 508 MiB were seen, in sysfs and in sysconf), and buffers of twice that
  // per rank made every 8-byte run fault in gigabytes first, past a -T of
  // a second.
  constexpr size_t kMostBelieved = size_t{64} << 20;
  // sysfs first: it gives one cache instance (32 MiB on an EPYC CCX), where
  // sysconf's LEVEL3 may add up every instance of the socket (320 MiB).
  for (int index = 4; index >= 0; --index) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(in >> text) || text.empty()) continue;
    size_t value = std::strtoull(text.c_str(), nullptr, 10);
    char unit = text.back();
    if (unit == 'K') value <<= 10;
    if (unit == 'M') value <<= 20;
    if (value > 0) return std::min(value, kMostBelieved);
  }
  for (int name : {_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    long bytes = sysconf(name);
    if (bytes > 0) return std::min(static_cast<size_t>(bytes), kMostBelieved);
  }
  return size_t{32} << 20;
}

PerfBuffers::PerfBuffers(size_t bytes, loomComm_t registerWith, int rank)
    : bytes_(bytes), comm_(registerWith), rank_(rank) {
  send_ = allocate(&sendHandle_);
  recv_ = allocate(&recvHandle_);
}

PerfBuffers::~PerfBuffers() {
  release(recv_, recvHandle_);
  release(send_, sendHandle_);
}

size_t PerfBuffers::offset(size_t span, size_t usable, long iter) const {
  // One position (cache-hot runs) needs no division: it is on every timed call.
  if (span == 0 || usable < 2 * span) return 0;
  return span * static_cast<size_t>(iter % static_cast<long>(usable / span));
}

unsigned char* PerfBuffers::allocate(void** handle) {
  const size_t length = bytes_ > 0 ? bytes_ : 1;
  if (comm_ == nullptr) {
    // Faulted in now (MAP_POPULATE): a rotating offset must not time the
    // first touch of each page inside the measured loop.
    void* data = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (data == MAP_FAILED) {
      std::fprintf(stderr, "perf: rank %d: cannot map %zu bytes of buffer\n", rank_, length);
      std::exit(kExitLibraryError);
    }
    return static_cast<unsigned char*>(data);
  }
  void* data = nullptr;
  loomResult_t rc = loomMemAlloc(&data, length);
  if (rc == loomSuccess) {
    std::memset(data, 0, length);  // fault the pages in before any timing, as MAP_POPULATE does above
    rc = loomCommRegister(comm_, data, length, handle);
  }
  if (rc != loomSuccess) {
    std::fprintf(stderr, "perf: rank %d: allocating and registering %zu bytes failed: %s: %s\n", rank_, length,
                 loomGetErrorString(rc), loomGetLastError());
    loomCommAbort(comm_);
    std::exit(kExitLibraryError);
  }
  return static_cast<unsigned char*>(data);
}

void PerfBuffers::release(unsigned char* data, void* handle) {
  if (data == nullptr) return;
  if (comm_ == nullptr) {
    munmap(data, bytes_ > 0 ? bytes_ : 1);
    return;
  }
  if (handle != nullptr) loomCommDeregister(comm_, handle);
  loomMemFree(data);
}

}  // namespace loom::perf

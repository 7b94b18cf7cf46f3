// The first page of every rank's segment: what the rank announces to all of
// its peers. Peers read it while they wait, so a rank that failed or has not
// arrived is named in their error sentences instead of leaving them to time out.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "base/doorbell.h"
#include "transport/collective_call.h"

namespace loom::shm {

struct StatusPage {
  // Where this rank's engine sleeps; peers ring it when they post to it or
  // free a slot it waits for.
  Doorbell doorbell;
  std::atomic<uint64_t> collectivesStarted;
  // The heartbeat (Transport::publishProgress), on a line of its own: peers
  // read it only while diagnosing a stall.
  alignas(64) std::atomic<int64_t> heartbeatMs;
  std::atomic<int32_t> waitingFor;
  // The collective this rank runs, under a sequence lock: the writer makes
  // callVersion odd while it writes, readers retry until they see one even
  // value on both sides of their copy, for a bounded number of tries: a
  // writer killed mid-write leaves the version odd for good.
  std::atomic<uint32_t> callVersion;
  CollectiveCall call;
  // 0: no failure; kWriting: a thread is writing `failure`; kFailed: it is
  // written. Only the first failure is kept: it is the root cause.
  std::atomic<uint32_t> failed;
  static constexpr uint32_t kFailed = 1, kWriting = 2;
  char failure[1024];  // the sentence of the failure, NUL-terminated
  // Random bytes peers read through cross-memory attach at init and compare
  // with what the shared mapping shows: proof that single-copy reads work.
  unsigned char memoryProbe[16];

  static constexpr size_t kBytes = 4096;

  void publishCall(const CollectiveCall& next);
  // The published call, or nothing if no consistent copy was seen in
  // kReadTries tries (a writer mid-write, or one that died there).
  std::optional<CollectiveCall> readCall() const;
  static constexpr int kReadTries = 1 << 14;
};
static_assert(sizeof(StatusPage) <= StatusPage::kBytes);

}  // namespace loom::shm

#include "transport/shm/shm_transport.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "bootstrap/unique_id.h"
#include "core/error.h"

namespace loom::shm {
namespace {

std::string uniqueSegmentName(int rank) {
  bootstrap::Secret random = bootstrap::randomSecret();
  char name[64];
  std::snprintf(name, sizeof(name), "/loom-%d-%02x%02x%02x%02x%02x%02x-r%d", static_cast<int>(getpid()), random[0],
                random[1], random[2], random[3], random[4], random[5], rank);
  return name;
}

// Every rank's FIFO geometry must match, or slot boundaries would disagree.
std::string describeGeometry(const FifoGeometry& g) {
  return std::to_string(g.slots) + "x" + std::to_string(g.slotBytes);
}

}  // namespace

ShmTransport::ShmTransport(int rank, const std::vector<pid_t>& pids, FifoGeometry geometry,
                           bootstrap::RendezvousClient& rendezvous)
    : rank_(rank) {
  const int nranks = static_cast<int>(pids.size());
  const size_t fifoBytes = geometry.bytes();
  ShmSegment own = ShmSegment::create(uniqueSegmentName(rank), kStatusBytes + fifoBytes * nranks);
  std::vector<std::string> names = rendezvous.allGather(own.name() + " " + describeGeometry(geometry));

  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) {
      segments_.push_back(std::move(own));
      continue;
    }
    const std::string& entry = names[peer];
    size_t space = entry.find(' ');
    if (space == std::string::npos || entry.compare(space + 1, std::string::npos, describeGeometry(geometry)) != 0)
      fail(loomInvalidUsage, "rank " + std::to_string(peer) + " uses shared-memory FIFOs '" +
                                 entry.substr(space == std::string::npos ? 0 : space + 1) + "' but rank " +
                                 std::to_string(rank) + " uses '" + describeGeometry(geometry) +
                                 "': set LOOM_SHM_SLOTS and LOOM_SHM_SLOT_BYTES alike on every rank");
    segments_.push_back(ShmSegment::open(entry.substr(0, space), kStatusBytes + fifoBytes * nranks));
  }
  // Only after every rank has mapped every segment may the names go.
  rendezvous.barrier();
  segments_[rank].unlink();

  send_.resize(nranks);
  recv_.resize(nranks);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) continue;
    char* incoming = static_cast<char*>(segments_[rank].data()) + kStatusBytes + fifoBytes * peer;
    char* outgoing = static_cast<char*>(segments_[peer].data()) + kStatusBytes + fifoBytes * rank;
    recv_[peer] = std::make_unique<ShmRecvConnection>(incoming, geometry, peer, pids[peer], &statusOf(peer));
    send_[peer] = std::make_unique<ShmSendConnection>(outgoing, geometry, peer, pids[peer], &statusOf(peer));
  }
}

void ShmTransport::announceCollectiveStarted(const CollectiveCall& call) {
  StatusPage& mine = statusOf(rank_);
  mine.publishCall(call);
  mine.collectivesStarted.store(call.number, std::memory_order_release);
}

int64_t ShmTransport::collectivesStartedBy(int peer) const {
  return static_cast<int64_t>(statusOf(peer).collectivesStarted.load(std::memory_order_acquire));
}

void ShmTransport::announceFailure(const std::string& sentence) {
  StatusPage& mine = statusOf(rank_);
  uint32_t expected = 0;
  if (!mine.failed.compare_exchange_strong(expected, StatusPage::kWriting)) return;
  size_t length = std::min(sentence.size(), sizeof(mine.failure) - 1);
  std::memcpy(mine.failure, sentence.data(), length);
  mine.failure[length] = '\0';
  mine.failed.store(StatusPage::kFailed, std::memory_order_release);
}

// A byte-wise copy under the sequence lock: the struct is plain data, and a
// torn copy is never used because the version check rejects it.
void StatusPage::publishCall(const CollectiveCall& next) {
  uint32_t version = callVersion.load(std::memory_order_relaxed);
  callVersion.store(version + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(static_cast<void*>(&call), &next, sizeof(call));
  callVersion.store(version + 2, std::memory_order_release);
}

CollectiveCall StatusPage::readCall() const {
  CollectiveCall copy;
  for (;;) {
    uint32_t before = callVersion.load(std::memory_order_acquire);
    std::memcpy(static_cast<void*>(&copy), &call, sizeof(copy));
    std::atomic_thread_fence(std::memory_order_acquire);
    if ((before & 1) == 0 && callVersion.load(std::memory_order_relaxed) == before) return copy;
  }
}

}  // namespace loom::shm

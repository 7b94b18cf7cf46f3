#include "transport/shm/shm_transport.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "bootstrap/unique_id.h"
#include "core/error.h"
#include "transport/shm/cross_memory_attach.h"

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

ShmTransport::ShmTransport(int rank, const std::vector<pid_t>& pids, FifoGeometry geometry, bool tryPeerMemory,
                           bootstrap::RendezvousClient& rendezvous)
    : rank_(rank) {
  const int nranks = static_cast<int>(pids.size());
  const size_t fifoBytes = geometry.bytes();
  ShmSegment own = ShmSegment::create(uniqueSegmentName(rank), kStatusBytes + fifoBytes * nranks);
  StatusPage& ownStatus = *static_cast<StatusPage*>(own.data());
  bootstrap::Secret probe = bootstrap::randomSecret();
  static_assert(sizeof(probe) == sizeof(ownStatus.memoryProbe));
  std::memcpy(ownStatus.memoryProbe, probe.data(), sizeof(probe));
  char probeAddress[32];
  std::snprintf(probeAddress, sizeof(probeAddress), "%p", static_cast<void*>(ownStatus.memoryProbe));
  // "<segment name> <FIFO geometry> <address of memoryProbe in this process>"
  std::vector<std::string> entries =
      rendezvous.allGather(own.name() + " " + describeGeometry(geometry) + " " + probeAddress);

  std::vector<const void*> probes(nranks, nullptr);
  for (int peer = 0; peer < nranks; ++peer) {
    if (peer == rank) {
      segments_.push_back(std::move(own));
      continue;
    }
    char name[256] = {}, theirGeometry[64] = {};
    void* theirProbe = nullptr;
    if (std::sscanf(entries[peer].c_str(), "%255s %63s %p", name, theirGeometry, &theirProbe) != 3)
      fail(loomRemoteError, "rank " + std::to_string(peer) + " sent a malformed shared-memory segment entry at init");
    if (describeGeometry(geometry) != theirGeometry)
      fail(loomInvalidUsage, "rank " + std::to_string(peer) + " uses shared-memory FIFOs '" + theirGeometry +
                                 "' but rank " + std::to_string(rank) + " uses '" + describeGeometry(geometry) +
                                 "': set LOOM_SHM_SLOTS and LOOM_SHM_SLOT_BYTES alike on every rank");
    segments_.push_back(ShmSegment::open(name, kStatusBytes + fifoBytes * nranks));
    probes[peer] = theirProbe;
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
  if (tryPeerMemory) agreeOnPeerMemory(pids, probes, rendezvous);
}

// Every rank reads every peer's probe through process_vm_readv; single-copy
// reads are used only if all of them succeed, because the ranks of one
// collective must all pick the same algorithm.
void ShmTransport::agreeOnPeerMemory(const std::vector<pid_t>& pids, const std::vector<const void*>& probes,
                                     bootstrap::RendezvousClient& rendezvous) {
  const int nranks = static_cast<int>(pids.size());
  std::string problem;
  for (int peer = 0; peer < nranks && problem.empty(); ++peer) {
    if (peer == rank_ || pids[peer] == getpid()) continue;
    std::string why = probeCrossMemoryAttach(pids[peer], probes[peer], statusOf(peer).memoryProbe,
                                             sizeof(StatusPage::memoryProbe));
    if (!why.empty())
      problem = "rank " + std::to_string(rank_) + " cannot read the memory of rank " + std::to_string(peer) + ": " + why;
  }
  std::vector<std::string> verdicts = rendezvous.allGather(problem);
  for (const std::string& verdict : verdicts) {
    if (!verdict.empty()) {
      peerMemoryUnavailable_ = verdict;
      return;
    }
  }
  peerMemory_ = std::make_unique<CrossMemoryAttach>(pids);
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

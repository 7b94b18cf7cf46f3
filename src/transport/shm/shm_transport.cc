#include "transport/shm/shm_transport.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "base/error.h"
#include "bootstrap/unique_id.h"
#include "transport/shm/cross_memory_attach.h"
#include "transport/shm/peer_check.h"
#include "transport/shm/shm_settings.h"

namespace loom::shm {
namespace {

// Every rank's FIFO geometry must match, or slot boundaries would disagree.
std::string describeGeometry(const FifoGeometry& g) {
  return std::to_string(g.slots) + "x" + std::to_string(g.slotBytes);
}

}  // namespace

bool canConnect(const RankIdentity& a, const RankIdentity& b) {
  return a.host == b.host;
}

std::unique_ptr<Transport> connect(const TransportSetup& setup) {
  const auto& settings = static_cast<const ShmSettings&>(setup.own);
  std::vector<pid_t> pids;
  for (const RankIdentity& identity : setup.identities) pids.push_back(identity.pid);
  FifoGeometry geometry{settings.slotBytes, settings.slots};
  if (settings.crossMemoryAttach && !setup.peers.empty()) enableCrossMemoryAttach();
  return std::make_unique<ShmTransport>(setup.rank, setup.peers, pids, geometry, settings.crossMemoryAttach,
                                        setup.rendezvous);
}

ShmTransport::ShmTransport(int rank, const std::vector<int>& peers, const std::vector<pid_t>& pids,
                           FifoGeometry geometry, bool tryPeerMemory, bootstrap::RendezvousClient& rendezvous)
    : rank_(rank), members_(pids.size(), -1) {
  group_ = peers;
  group_.push_back(rank);
  std::sort(group_.begin(), group_.end());
  for (size_t i = 0; i < group_.size(); ++i) members_[group_[i]] = static_cast<int>(i);
  const size_t groupSize = group_.size();
  const size_t fifoBytes = geometry.bytes();
  const size_t segmentBytes = kStatusBytes + fifoBytes * groupSize * kChannels;

  // A rank without shm peers still takes part in the rounds, with an empty
  // entry, since every rank of the communicator runs them.
  std::string entry;
  std::vector<const void*> probes(pids.size(), nullptr);
  if (!peers.empty()) {
    ShmSegment own = ShmSegment::create("loom-r" + std::to_string(rank), segmentBytes);
    StatusPage& ownStatus = *static_cast<StatusPage*>(own.data());
    bootstrap::Secret probe = bootstrap::randomSecret();
    static_assert(sizeof(probe) == sizeof(ownStatus.memoryProbe));
    std::memcpy(ownStatus.memoryProbe, probe.data(), sizeof(probe));
    char probeAddress[32];
    std::snprintf(probeAddress, sizeof(probeAddress), "%p", static_cast<void*>(ownStatus.memoryProbe));
    // "<pid> <fd> <device> <inode> <FIFO geometry> <group size> <address of memoryProbe in this process>"
    const SegmentAddress at = own.address();
    entry = std::to_string(at.pid) + " " + std::to_string(at.fd) + " " + std::to_string(at.device) + " " +
            std::to_string(at.inode) + " " + describeGeometry(geometry) + " " + std::to_string(groupSize) + " " +
            probeAddress;
    segments_.resize(groupSize);
    segments_[members_[rank]].emplace(std::move(own));
  }
  std::vector<std::string> entries = rendezvous.allGather(entry);

  try {
    mapPeers(peers, entries, geometry, segmentBytes, probes);
    // Only after every rank has mapped every segment may the files go.
    rendezvous.barrier();
  } catch (const Error&) {
    // A rank that died during init makes others fail here in ways that
    // point elsewhere (its peers close their segments as they give up):
    // name the dead one if there is one.
    for (int peer : peers)
      if (processExited(pids[peer]))
        fail(loomRemoteError, "rank " + std::to_string(peer) + " (pid " + std::to_string(pids[peer]) +
                                  ") exited during init, while rank " + std::to_string(rank) +
                                  " was mapping the shared memory of the ranks on its host");
    throw;
  }
  if (!peers.empty()) segments_[members_[rank]]->closeFile();

  send_.resize(groupSize * kChannels);
  recv_.resize(groupSize * kChannels);
  for (int c = 0; c < kChannels; ++c) {
    const Channel channel = static_cast<Channel>(c);
    const size_t firstFifo = static_cast<size_t>(c) * groupSize;  // this channel's FIFOs in a segment
    for (int peer : peers) {
      char* incoming = static_cast<char*>(segments_[members_[rank]]->data()) + kStatusBytes +
                       fifoBytes * (firstFifo + members_[peer]);
      char* outgoing = static_cast<char*>(segments_[members_[peer]]->data()) + kStatusBytes +
                       fifoBytes * (firstFifo + members_[rank]);
      FifoPeer them{peer, pids[peer], &statusOf(peer)};
      recv_[index(peer, channel)] = std::make_unique<ShmRecvConnection>(incoming, geometry, them);
      send_[index(peer, channel)] = std::make_unique<ShmSendConnection>(outgoing, geometry, them);
    }
  }
  if (tryPeerMemory)
    agreeOnPeerMemory(pids, probes, rendezvous);
  else
    peerMemoryUnavailable_ = "LOOM_CMA is not 1";
}

void ShmTransport::mapPeers(const std::vector<int>& peers, const std::vector<std::string>& entries,
                            FifoGeometry geometry, size_t segmentBytes, std::vector<const void*>& probes) {
  const size_t groupSize = group_.size();
  for (int peer : peers) {
    int pid = 0, fd = -1;
    unsigned long long device = 0, inode = 0;
    char theirGeometry[64] = {};
    size_t theirGroup = 0;
    void* theirProbe = nullptr;
    if (std::sscanf(entries[peer].c_str(), "%d %d %llu %llu %63s %zu %p", &pid, &fd, &device, &inode, theirGeometry,
                    &theirGroup, &theirProbe) != 7 ||
        pid <= 0 || fd < 0)
      fail(loomRemoteError, "rank " + std::to_string(peer) +
                                " sent a malformed shared-memory segment entry at init: '" +
                                entries[peer].substr(0, 120) + "'");
    if (describeGeometry(geometry) != theirGeometry)
      fail(loomInvalidUsage, "rank " + std::to_string(peer) + " uses shared-memory FIFOs '" + theirGeometry +
                                 "' but rank " + std::to_string(rank_) + " uses '" + describeGeometry(geometry) +
                                 "': set LOOM_SHM_SLOTS and LOOM_SHM_SLOT_BYTES alike on every rank");
    if (theirGroup != groupSize)
      fail(loomInternalError, "rank " + std::to_string(peer) + " counts " + std::to_string(theirGroup) +
                                  " ranks on this host and rank " + std::to_string(rank_) + " counts " +
                                  std::to_string(groupSize));
    const SegmentAddress address{static_cast<pid_t>(pid), fd, device, inode};
    segments_[members_[peer]].emplace(ShmSegment::open(address, segmentBytes, "rank " + std::to_string(peer)));
    probes[peer] = theirProbe;
  }
}

// Every rank reads every peer's probe through process_vm_readv; single-copy
// reads are used only if all of them succeed, because the ranks of one
// collective must all pick the same algorithm.
void ShmTransport::agreeOnPeerMemory(const std::vector<pid_t>& pids, const std::vector<const void*>& probes,
                                     bootstrap::RendezvousClient& rendezvous) {
  std::string problem;
  for (int peer : group_) {
    if (!problem.empty()) break;
    if (peer == rank_ || pids[peer] == getpid()) continue;
    std::string why =
        probeCrossMemoryAttach(pids[peer], probes[peer], statusOf(peer).memoryProbe, sizeof(StatusPage::memoryProbe));
    if (!why.empty())
      problem =
          "rank " + std::to_string(rank_) + " cannot read the memory of rank " + std::to_string(peer) + ": " + why;
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
  if (member(peer) < 0) return -1;
  return static_cast<int64_t>(statusOf(peer).collectivesStarted.load(std::memory_order_acquire));
}

void ShmTransport::publishProgress(int64_t nowMs, int waitingFor) {
  StatusPage& mine = statusOf(rank_);
  mine.waitingFor.store(waitingFor, std::memory_order_relaxed);
  mine.heartbeatMs.store(nowMs, std::memory_order_release);
}

PeerProgress ShmTransport::progressOf(int peer) const {
  if (member(peer) < 0) return {};
  const StatusPage& theirs = statusOf(peer);
  PeerProgress progress;
  progress.heartbeatMs = theirs.heartbeatMs.load(std::memory_order_acquire);
  progress.known = progress.heartbeatMs != 0;
  progress.waitingFor = theirs.waitingFor.load(std::memory_order_relaxed);
  return progress;
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

std::optional<CollectiveCall> StatusPage::readCall() const {
  CollectiveCall copy;
  for (int attempt = 0; attempt < kReadTries; ++attempt) {
    uint32_t before = callVersion.load(std::memory_order_acquire);
    std::memcpy(static_cast<void*>(&copy), &call, sizeof(copy));
    std::atomic_thread_fence(std::memory_order_acquire);
    if ((before & 1) == 0 && callVersion.load(std::memory_order_relaxed) == before) return copy;
  }
  return std::nullopt;
}

}  // namespace loom::shm

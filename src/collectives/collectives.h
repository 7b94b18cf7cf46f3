// Algorithms as schedules of primitives. Each runs on one rank, on the
// progress thread (or the caller's, for a blocking call on an idle
// communicator), and returns when this rank's part is done.
#pragma once

#include <loom/loom.h>

#include <cstddef>
#include <vector>

#include "transport/transport.h"
#include "transport/wait_context.h"

namespace loom {

namespace shm {
class PeerWindows;
}

// Algorithm choices that LOOM_ALGO and the size thresholds control.
struct Tuning {
  enum class Force { kAuto, kRing, kAllPairs, kDirect, kTree };
  Force force = Force::kAuto;
  size_t allPairsMaxBytes = 16 * 1024;  // per rank; above it AllReduce uses the ring
  size_t directMinBytes = 256 * 1024;   // whole buffer (as nccl-tests' size); from it on, direct.h
  size_t treeMaxBytes = 64 * 1024;      // Broadcast/Reduce up to this use the tree (tree.h), above it the chain
};

// Where this rank sits and how it reaches the others.
struct Team {
  int rank;
  int nranks;
  std::vector<int> ring;  // ring[i] is the rank at ring position i
  int ringPosition;       // this rank's position in `ring`
  Transport* transport;   // null when nranks == 1
  Tuning tuning;
  shm::PeerWindows* windows = nullptr;  // registered buffers (registered.h); changed only by (de)registration

  int ringRank(int position) const { return ring[((position % nranks) + nranks) % nranks]; }
  int positionOf(int rank) const {
    int position = 0;
    while (ring[position] != rank) ++position;
    return position;
  }
  // Steps forward around the ring from `rank` to this rank.
  int hopsFrom(int rank) const { return ((ringPosition - positionOf(rank)) % nranks + nranks) % nranks; }
  SendConnection& next() const { return transport->sendTo(ringRank(ringPosition + 1)); }
  RecvConnection& prev() const { return transport->recvFrom(ringRank(ringPosition - 1)); }
};

struct CollectiveArgs {
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
  size_t count = 0;  // per the C API's meaning for the collective
  loomDataType_t dtype = loomUint8;
  loomRedOp_t op = loomSum;
  int root = 0;  // Broadcast, Reduce; the peer for Send and Recv
};

void ringAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void ringAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void ringReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void chainBroadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void chainReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void treeBroadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void treeReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void pairwiseAllToAll(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void pointToPointSend(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void pointToPointRecv(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void ringBarrier(const Team& team, const WaitContext& wait);

// Entry points that pick the algorithm (all_pairs.h for small messages,
// direct.h for large ones where peers' memory is readable, the ring
// otherwise), identically on every rank since the inputs are.
void allReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void allGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void reduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void broadcast(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void reduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
void barrier(const Team& team, const WaitContext& wait);

// Splits `total` elements into `parts` nearly equal blocks; block i starts at
// blockOffset(i) and has blockSize(i) elements (sizes differ by at most one).
struct EvenSplit {
  size_t total;
  int parts;
  size_t blockSize(int i) const { return total / parts + (static_cast<size_t>(i) < total % parts ? 1 : 0); }
  size_t blockOffset(int i) const {
    size_t base = total / parts, extra = total % parts;
    return base * i + (static_cast<size_t>(i) < extra ? i : extra);
  }
};

}  // namespace loom

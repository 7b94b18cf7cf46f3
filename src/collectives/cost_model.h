// Time estimates for the schedules that compete for one call: a
// latency/bandwidth (alpha/beta) model over the team's links, as NCCL's
// tuner and the MPI literature use. A schedule takes steps, each crossing
// the slowest link class it uses (one host: shared memory, or the socket
// interconnect between the sockets its ranks are bound to; several: the
// network), and puts bytes through its busiest link, which the ranks of a
// host (or a socket) may share (a ring crosses each boundary once; the
// logarithmic schedules send from every rank of a host at once).
//
//   time = steps x (link latency + (L - 1) x switch)
//        + L x (steps x the schedule's own cost per step
//               + further messages x the link's cost per message)
//        + steps across hosts x (sharers - 1) x the link's cost per message
//        + the longest of: the busiest rank's bytes / (its share of the
//          link: link bandwidth / sharers, at most a CPU's stream), every
//          rank's bytes x L / a CPU's stream, every rank's bytes x the
//          ranks of a host / its memory's rate (each at the schedule's
//          efficiency)
//
// with L the ranks per CPU (below),
// and the sharers the ranks of a host whose messages cross its network
// link in one step: they share its bandwidth, and its stack and
// NIC take their messages one after another (measured: on 2 hosts of 2,
// one message across per host through a leader beat one per rank 2.5x).
// The simulator's timeline charges each message to its receiver alone, so
// the two weigh many small messages differently.
//
// The CPUs are sharers too. Where a host has more ranks than CPUs (L ranks
// per CPU), the ranks run in turns: every copy, message and step's own
// cost takes L times as long, the copies together cannot outrun the CPUs
// (a rank's stream at most the shared-memory rate / L), and each step
// waits (L - 1) switches for the rank it wakes to be run. Measured on 2
// CPUs: a ring AllReduce's stream per rank 8242, 4629 and 2409 bytes/us
// on 2, 4 and 8 ranks, its step 0.25, 1.21 and 3.59 us. And the memory:
// the copies of a host's ranks together cannot outrun what its memory
// moves (many cores copying at once saturate it).
//
// The constants sit in one table (defaultCosts); they describe a CPU's
// stream and a step between ranks that each have a CPU, and a tuning file
// measured on the running machine replaces them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "collectives/algorithm_table.h"

namespace loom {

struct LinkCosts {
  double latencyUs = 0;   // one step: a message handed over and noticed
  double bytesPerUs = 0;  // one rank's stream over the link, alone on it
  double messageUs = 0;   // each further message a step sends or takes in (all-pairs: one per peer)
};

struct CostConstants {
  LinkCosts sharedMemory;  // its bytesPerUs is also what one CPU copies
  LinkCosts network;
  // Between the sockets of a host (UPI, Infinity Fabric): its bytesPerUs
  // is the interconnect's each way, shared by the copies crossing at once.
  LinkCosts socketLink;
  double switchUs = 0;          // a step's wait for the rank it wakes, per further rank on that rank's CPU
  double memoryBytesPerUs = 0;  // what a host's memory copies for all its ranks at once
  // Per algorithm: what one step costs beyond the link (bookkeeping,
  // reductions into scratch), and the share of the link's bandwidth (as the
  // ring reaches it) its copies reach: extra local copies lower it; data
  // that stays in cache may lift it above 1.
  double stepUs[kTunedAlgorithms] = {};
  double efficiency[kTunedAlgorithms] = {};
};

const CostConstants& defaultCosts();

// What TCP moves over a link of `linkMbps` (its NIC's speed, or a queue's
// rate), in the model's bytes per microsecond: the built-in network's share
// of the 10 Gbit/s it describes.
double networkBytesPerUsAt(int64_t linkMbps);

// What the model needs to know of a team.
struct TeamShape {
  int nranks = 1;
  int hosts = 1;
  int mostRanksOnAHost = 1;  // the ranks that may share a host's network link
  // Teams of this shape that run beside this one at once, each with a rank
  // on every host, sharing each host's link: the lanes of the steps across
  // hosts (hierarchical.h).
  int lanes = 1;
  // Ranks per CPU on the most crowded host (the CPUs its ranks may run on);
  // 1 or less: a CPU per rank.
  double ranksPerCpu = 1;
  // On one host: the sockets its ranks are bound across (their steps
  // between sockets cross the interconnect); 1 where unknown.
  int sockets = 1;
  // The fewest CPUs of a host (topo::HostCrowding): what the steps across
  // hosts, a lane per local index at once, share there; 0 where unknown.
  int fewestCpusOnAHost = 0;
};

// One schedule's shape on P ranks moving `bytes`: its steps, the bytes
// through its busiest rank's link, and its further messages; steps < 0
// where the model does not rank it. Calibration fits the constants to it.
//
// Broadcast and Reduce are pipelined by `chunkBytes` (the team's slot): a
// rooted schedule's first chunk goes down a path of its tree
// (rooted_shape.h), each hop copying it out of one slot and, with the
// sends the path waits through, into the next (stepBytes: those copies per
// hop); each further chunk waits on one more pass of the busiest rank's
// copies: those passes are its bytes and its further messages. trafficOf
// gives the deepest path's; estimateUs takes the longest path. A Reduce
// passes each chunk once a hop (receive, reduce, send on).
struct Traffic {
  double steps = -1;
  double bytes = 0;
  bool everyRankAtOnce = false;  // its cross-host steps leave every rank of a host at once
  double messages = 0;           // beyond one sent and one taken in per step
  // Its distances double (trees, halving/doubling, Bruck, dissemination):
  // across hosts, log2(H) of its log2(P) steps cross them, where a chain
  // along the ring crosses on H of its P links.
  bool logarithmic = false;
  double stepBytes = 0;           // what each step forwards whole before the next starts (the rooted schedules' chunk)
  bool everyStepCrosses = false;  // each step is all-pairs: across hosts, every one waits on the network
  // What a rank copies on average, where it differs from the busiest
  // rank's `bytes` (the rooted schedules): where ranks share CPUs, every
  // rank's copies wait on the others'. Negative: as `bytes`.
  double meanBytes = -1;
};
Traffic trafficOf(TunedCollective collective, TunedAlgorithm algorithm, int nranks, double bytes,
                  double chunkBytes = static_cast<double>(SIZE_MAX));

// Whether the model ranks `algorithm` for `collective`: the flat schedules
// (ring, tree, halving/doubling, Bruck, AllReduce's all-pairs step; for
// Broadcast and Reduce the chain and both trees; for Barrier all-pairs,
// dissemination and the ring) and, where buffers are registered or
// readable (plan.h says where), the single-copy transfers.
bool modelRanks(TunedCollective collective, TunedAlgorithm algorithm);

// Estimated microseconds of one call moving `bytes` (the whole buffer, as
// nccl-tests' size column: AllReduce's buffer, AllGather's result,
// ReduceScatter's input; Barrier: 0) in the team's slots of `chunkBytes`;
// negative where the model does not rank it. The per-algorithm constants
// (stepUs, efficiency) are those of the AllReduce, AllGather and
// ReduceScatter schedules they were measured on: Broadcast, Reduce and
// Barrier pass plain chunks and empty messages, priced by the link alone.
double estimateUs(TunedCollective collective, TunedAlgorithm algorithm, const TeamShape& shape, size_t bytes,
                  const CostConstants& costs, size_t chunkBytes = SIZE_MAX);

// The model's last choice per collective for one team, so that calls of one
// size back to back do not weigh the schedules again (tens of nanoseconds
// of an 8-byte call). The choice depends on nothing else that changes but
// whether buffers are registered: the team's shape, its tuning and its
// slots are fixed.
struct RankedMemo {
  size_t bytes[kTunedCollectives];
  bool registered[kTunedCollectives] = {};  // some buffers were registered (plan.h's registeredWindows)
  TunedAlgorithm algorithm[kTunedCollectives];
  RankedMemo() {
    for (size_t& b : bytes) b = SIZE_MAX;
    for (TunedAlgorithm& a : algorithm) a = TunedAlgorithm::kRing;
  }
};

}  // namespace loom

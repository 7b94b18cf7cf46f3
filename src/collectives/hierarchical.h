// Collectives in steps for ranks on several hosts, so each host's network
// link carries less. AllReduce: within each host, a
// ring ReduceScatter over shared memory leaves local index i with the host's
// sum of block i; across hosts, the ranks with local index i AllReduce that
// block over the network; within each host, a ring AllGather puts the blocks
// together. A host's network link then carries 2(H-1)/H of the buffer each
// way, where a flat ring over all n ranks carries 2(n-1)/n: with 2 hosts of
// 2 ranks, 1 buffer instead of 1.5. On two hosts the three steps overlap,
// segment by segment (hierarchical_pipeline.h). AllGather: across hosts
// among the ranks with one local index, then within each host: on two
// hosts a host's link carries its own ranks' blocks, where the flat ring
// carries n-1 blocks on every link.
// ReduceScatter: within each host, then across hosts among the ranks with
// one local index: the link carries the host's partial sums of the other
// hosts' blocks. On hosts with different numbers of ranks AllReduce cuts
// one block per local index that every host has, and a larger host's other
// ranks join the steps within it only; AllGather and ReduceScatter let
// those local indices carry the other ranks' blocks too, in further rounds
// (hierarchical_blocks.cc). Every step across hosts runs the cost model's
// cheapest flat schedule for it (plan.h's cheapestAcrossHosts; AllGather's
// and ReduceScatter's where every host has as many ranks, else the ring).
#pragma once

#include <string>

#include "collectives/collectives.h"

namespace loom {

// How many hosts the team's members sit on.
int hostsOf(const Team& team);

// Describes the team's hosts for a sentence: "3 hosts with 1, 2 and 3 ranks".
std::string describeHosts(const Team& team);

// The steps run on any layout of several hosts where some host has more
// than one rank; hierarchicalAllReduce and hierarchical_blocks.cc say how
// uneven hosts split the work.
bool hierarchicalFits(const Team& team);
// Sets the team's Team::twoHostSegmentBytes and Team::acrossSlotBytes, once
// its members' places are final (every rank finds the same).
void keepAcrossHostsShape(Team& team);
Task<> hierarchicalAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);

// A small AllReduce or AllGather through one leader per host, on several
// hosts, one of them with several ranks (any layout: each host's rank count
// is its own), where every message (an input; AllGather: the whole result)
// fits a slot (plan.cc decides where, as fitsLeaders).
Task<> leaderAllReduce(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> leaderAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> hierarchicalAllGather(const Team& team, const CollectiveArgs& args, const WaitContext& wait);
Task<> hierarchicalReduceScatter(const Team& team, const CollectiveArgs& args, const WaitContext& wait);

}  // namespace loom

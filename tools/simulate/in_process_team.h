// The team a rank of one in-memory fabric runs collectives on, as a
// communicator would form it at init: every rank a member, each placed on
// the host `hostOf` gives it, the ring in the order given. The tests that
// drive the schedules as threads and the schedule simulator share it.
#pragma once

#include <cstdint>
#include <vector>

#include "collectives/collectives.h"
#include "collectives/team.h"
#include "transport/collective_call.h"
#include "transport/connections.h"

namespace loom::simulate {

// hostOf: which host each rank is on (hosts numbered from 0 in order of
// their lowest rank); empty: all on one. ring: team indices by position;
// empty: rank order. `connections` and `inboxes` (may be null) outlive the team.
// The in-memory transport's index in transportKinds().
int inMemoryKind();

// Collective number `number` of kind `kind` with `args`, labelled as the C
// API labels it: the op only of reductions, the root only of rooted
// collectives (AllReduce, AllGather, ReduceScatter, Broadcast, Reduce).
CollectiveCall inProcessCall(uint64_t number, OperationKind kind, const CollectiveArgs& args);

Team inProcessTeam(int rank, int nranks, const std::vector<int>& hostOf, const std::vector<int>& ring,
                   Connections* connections, PointToPointInboxes* inboxes, const Tuning& tuning);

}  // namespace loom::simulate

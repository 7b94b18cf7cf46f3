// What a rank left waiting can conclude from the collective a peer says it
// runs (its status page, or its last heartbeat): that the peer called this
// collective with other arguments, or already finished it, so it will never
// send what this rank waits for. Shared by every transport's peer check.
#pragma once

#include "transport/collective_call.h"
#include "transport/connection.h"
#include "transport/wait_context.h"

namespace loom {

// Throws loomInvalidUsage naming both calls when `theirs` shows the peer
// will never move `connection`; returns otherwise. Judging a peer that has
// moved on to a later collective needs its posts to be visible before its
// announcements (shared memory); over TCP an announcement can overtake
// the data frames sent before it, so there only checkPeerArguments applies.
void checkPeerCall(const WaitContext& ctx, int peer, const CollectiveCall& theirs, Waitable& connection);
// Only: the peer runs this collective with other arguments.
void checkPeerArguments(const WaitContext& ctx, int peer, const CollectiveCall& theirs);

}  // namespace loom

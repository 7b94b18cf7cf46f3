#include "transport/peer_call.h"

#include <string>

#include "base/error.h"

namespace loom {

void checkPeerArguments(const WaitContext& ctx, int peer, const CollectiveCall& theirs) {
  if (ctx.call != nullptr && theirs.number == ctx.call->number && !theirs.sameCallAs(*ctx.call))
    fail(loomInvalidUsage, ctx.describeMismatch(peer, theirs));
}

void checkPeerCall(const WaitContext& ctx, int peer, const CollectiveCall& theirs, Waitable& connection) {
  if (ctx.call == nullptr) return;
  checkPeerArguments(ctx, peer, theirs);
  // A peer posts before it announces its next collective, so once that
  // announcement is visible so is the post: look again before blaming it.
  if (theirs.number > ctx.call->number && !connection.ready())
    fail(loomInvalidUsage,
         ctx.describe() + " cannot finish: rank " + std::to_string(peer) + " already finished collective #" +
             std::to_string(ctx.call->number) + " and started " + theirs.describe() + " while this rank (" +
             ctx.call->describe() + ") still waits for it " + connection.peerMustDo() +
             ": the ranks passed different arguments to collective #" + std::to_string(ctx.call->number));
}

}  // namespace loom

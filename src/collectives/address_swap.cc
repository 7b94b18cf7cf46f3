#include "collectives/address_swap.h"

#include <cstdint>

#include "base/error.h"
#include "collectives/all_pairs.h"

namespace loom {
namespace {

struct AddressMessage {
  uint64_t send;
  uint64_t recv;
  CollectiveCall call;
};

}  // namespace

Task<std::vector<PeerBuffers>> swapAddresses(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  AddressMessage mine{reinterpret_cast<uintptr_t>(args.sendbuf), reinterpret_cast<uintptr_t>(args.recvbuf),
                      wait.call != nullptr ? *wait.call : CollectiveCall{}};
  std::vector<AddressMessage> messages(team.nranks);
  auto check = [&](int peer) {
    const CollectiveCall& theirs = messages[peer].call;
    if (wait.call != nullptr && (theirs.number != wait.call->number || !theirs.sameCallAs(*wait.call)))
      fail(loomInvalidUsage, wait.describeMismatch(peer, theirs));
  };
  co_await allPairsExchange(team, &mine, sizeof(mine), messages.data(), wait, check);
  std::vector<PeerBuffers> all(team.nranks);
  for (int peer = 0; peer < team.nranks; ++peer) {
    const AddressMessage& theirs = messages[peer];
    all[peer] = {reinterpret_cast<const char*>(static_cast<uintptr_t>(theirs.send)),
                 reinterpret_cast<char*>(static_cast<uintptr_t>(theirs.recv))};
  }
  co_return all;
}

}  // namespace loom

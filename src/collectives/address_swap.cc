#include "collectives/address_swap.h"

#include <cstdint>

#include "collectives/all_pairs.h"

namespace loom {
namespace {

struct AddressMessage {
  uint64_t send;
  uint64_t recv;
};

}  // namespace

Task<std::vector<PeerBuffers>> swapAddresses(const Team& team, const CollectiveArgs& args, const WaitContext& wait) {
  // The messages' labels say which collective sent them: a peer that called
  // something else fails the exchange before its addresses are used.
  AddressMessage mine{reinterpret_cast<uintptr_t>(args.sendbuf), reinterpret_cast<uintptr_t>(args.recvbuf)};
  std::vector<AddressMessage> messages = co_await allPairsExchange(team, mine, wait);
  std::vector<PeerBuffers> all(team.nranks);
  for (int peer = 0; peer < team.nranks; ++peer) {
    const AddressMessage& theirs = messages[peer];
    all[peer] = {reinterpret_cast<const char*>(static_cast<uintptr_t>(theirs.send)),
                 reinterpret_cast<char*>(static_cast<uintptr_t>(theirs.recv))};
  }
  co_return all;
}

}  // namespace loom

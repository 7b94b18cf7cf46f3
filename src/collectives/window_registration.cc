#include "collectives/window_registration.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/logging.h"
#include "collectives/all_pairs.h"
#include "transport/registry.h"

namespace loom {
namespace {

// Whether a rank mapped every peer's buffer, and if not, why.
struct MapStatus {
  int32_t failedPeer = -1;
  int32_t unmappablePeer = -1;  // reached over a transport that cannot register memory
  char why[400] = {};
};

}  // namespace

Task<std::optional<Error>> registerWindow(const Team& team, RegionOffer mine, const WaitContext& wait) {
  // Offers of one build all have the same size: a key from each kind that
  // registers memory.
  const std::vector<unsigned char> encoded = mine.encode();
  std::vector<unsigned char> all(encoded.size() * team.nranks);
  co_await allPairsExchange(team, encoded.data(), encoded.size(), all.data(), wait);
  std::vector<RegionOffer> offers;
  for (int r = 0; r < team.nranks; ++r)
    offers.push_back(RegionOffer::decode(all.data() + r * encoded.size(), encoded.size(), mine.keys.size(), r));
  std::vector<std::unique_ptr<PeerRegion>> byRank(team.nranks);
  MapStatus status;
  for (int r = 0; r < team.nranks && status.failedPeer < 0; ++r) {
    std::string why;
    if (r != team.rank && !kindRegistersMemory(team.connections->kindOf(team.peerOf(r)))) {
      if (status.unmappablePeer < 0) status.unmappablePeer = r;
      continue;
    }
    if (offers[r].window != mine.window)
      why = "it sent registration #" + std::to_string(offers[r].window) + " while this rank is at #" +
            std::to_string(mine.window) + " (is every rank running the same Loom?)";
    else
      byRank[r] = r == team.rank ? openRegion(ownRegionKind(), offers[r], true, &why)
                                 : openRegion(team.connections->kindOf(team.peerOf(r)), offers[r], false, &why);
    if (byRank[r] == nullptr) {
      status.failedPeer = r;
      std::strncpy(status.why, why.c_str(), sizeof(status.why) - 1);
    }
  }
  std::vector<MapStatus> statuses = co_await allPairsExchange(team, status, wait);
  for (int r = 0; r < team.nranks; ++r) {
    if (statuses[r].failedPeer < 0) continue;
    statuses[r].why[sizeof(statuses[r].why) - 1] = '\0';
    co_return Error(loomSystemError, "loomCommRegister: rank " + std::to_string(r) + " cannot map the buffer of rank " +
                                         std::to_string(statuses[r].failedPeer) + ": " + statuses[r].why +
                                         "; no rank registered it");
  }
  for (int r = 0; r < team.nranks; ++r) {
    if (statuses[r].unmappablePeer < 0) continue;
    // Single-copy needs every rank to reach every other's buffer.
    if (team.rank == 0)
      LOOM_INFO("COLL", team.rank,
                "registration #" << mine.window << " maps no buffer: rank " << r << " reaches rank "
                                 << statuses[r].unmappablePeer
                                 << " over a transport that cannot register memory; calls on it run through the FIFOs");
    team.windows->add(mine.window, {});
    co_return std::nullopt;
  }
  team.windows->add(mine.window, std::move(byRank));
  co_return std::nullopt;
}

Task<std::optional<Error>> deregisterWindow(const Team& team, uint64_t window, const WaitContext& wait) {
  struct Request {
    uint64_t window;
    uint32_t known;
  };
  std::vector<Request> requests =
      co_await allPairsExchange(team, Request{window, team.windows->contains(window)}, wait);
  for (int r = 0; r < team.nranks; ++r) {
    if (!requests[r].known)
      co_return Error(loomInvalidArgument, "loomCommDeregister: rank " + std::to_string(r) +
                                               " passed a handle that is not a live registration of this "
                                               "communicator; nothing was deregistered");
    if (requests[r].window != requests[0].window)
      co_return Error(loomInvalidUsage, "loomCommDeregister: rank 0 deregisters registration #" +
                                            std::to_string(requests[0].window) + " and rank " + std::to_string(r) +
                                            " #" + std::to_string(requests[r].window) +
                                            "; every rank must deregister the same one; nothing was deregistered");
  }
  team.windows->remove(window);
  co_return std::nullopt;
}

}  // namespace loom

// The transports Loom has, in order of preference, and the choice of one per
// pair of ranks, as NCCL's transport table: each kind says from two ranks'
// identities whether it can connect them (canConnect), and sets up its
// connections to the peers it was chosen for (connect). Per pair the first
// kind that can connect it wins; LOOM_TRANSPORTS narrows the list ("shm"
// forces shared memory, "^shm" excludes it). Every rank sees every identity,
// so both ends of a pair choose alike.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bootstrap/interface_choice.h"
#include "bootstrap/rendezvous.h"
#include "transport/identity.h"
#include "transport/regions.h"
#include "transport/transport.h"

namespace loom {

// How a kind's FIFOs are cut under its settings: `slots` slots of `bytes`
// data bytes each, each way.
struct SlotShape {
  int slots = 0;
  size_t bytes = 0;
};

// One kind's own settings, read from its LOOM_* variables and checked once
// per communicator, before any rank waits (TransportKind::readSettings).
class KindSettings {
 public:
  virtual ~KindSettings() = default;
  // What every rank must set alike, as "LOOM_X=1 LOOM_Y=2". Algorithms cut
  // messages by the smallest slot among a team's pairs
  // (Connections::slotBytesAmong), which every rank computes from its own
  // settings: ranks that never share one of this kind's FIFOs must still
  // agree on its slots.
  virtual std::string agreement() const = 0;
  // Its FIFOs' slots.
  virtual SlotShape slotShape() const = 0;
};
// Every kind's, by index in transportKinds().
using KindSettingsList = std::vector<std::shared_ptr<const KindSettings>>;

// What a transport's setup may use, filled in by the communicator.
struct TransportSettings {
  KindSettingsList kinds;               // readKindSettings()
  bootstrap::InterfaceRequest network;  // LOOM_SOCKET_IFNAME, LOOM_SOCKET_FAMILY: where the bootstrap listens too
  int64_t timeoutMs = 0;                // the communicator's timeout, for connecting
  // Settings of the layers above that every rank must share (the choice of
  // algorithms), checked in the same round as the kinds' own.
  std::string agreedAbove;
};

struct TransportSetup {
  int rank;
  const std::vector<RankIdentity>& identities;  // by communicator rank
  const std::vector<int>& peers;                // the ranks this kind connects to this one; may be empty
  const TransportSettings& settings;
  const KindSettings& own;                  // settings.kinds[this kind], as the kind's own type
  bootstrap::RendezvousClient& rendezvous;  // its rounds are collective over all ranks
};

struct TransportKind {
  const char* name;  // as LOOM_TRANSPORTS and the logs write it
  bool (*canConnect)(const RankIdentity& a, const RankIdentity& b);
  // Collective over every rank, including ranks that have no peer on this
  // kind (their `peers` is empty): setups exchange addresses in rounds.
  std::unique_ptr<Transport> (*connect)(const TransportSetup& setup);
  // Reads and checks this kind's LOOM_* variables; throws
  // loomInvalidArgument naming a malformed one.
  std::shared_ptr<const KindSettings> (*readSettings)();
  // Registration (regions.h); null for a kind that cannot register memory.
  void (*makeRegionKey)(const char* api, uint64_t window, const void* base, size_t bytes,
                        unsigned char key[kRegionKeyBytes]);
  // `own`: this rank's own buffer, which the region pins while it lives.
  std::unique_ptr<PeerRegion> (*openRegion)(const unsigned char key[kRegionKeyBytes], bool own, std::string* why);
  // loomMemAlloc / loomMemFree's memory, which this kind can register (shm:
  // memfd pages other processes can map); null for a kind that has none.
  // Both throw an Error saying why.
  void* (*allocateRegistrable)(size_t bytes);
  void (*freeRegistrable)(void* pointer);
  // Used only where LOOM_TRANSPORTS names it (mem, for tests and tools),
  // and then before every other kind that can connect a pair.
  bool onlyWhenNamed = false;
};

// Every kind, most preferred first.
const std::vector<TransportKind>& transportKinds();
// Every kind's settings from the environment (TransportKind::readSettings).
KindSettingsList readKindSettings();

// LOOM_TRANSPORTS: a comma-separated list of kinds to use, or of kinds to
// exclude after a leading '^'. Empty: every kind, but those used only when
// named.
struct TransportFilter {
  std::vector<std::string> names;
  bool exclude = false;
  bool allows(const char* kind) const;
};
// Throws loomInvalidArgument naming an unknown kind and the known ones.
TransportFilter parseTransportFilter(const std::string& text, const char* variable);

// This process's offer of [base, base + bytes) for registration `window`,
// with a key from every kind that can register memory. Throws (naming
// `api`) when such a kind refuses the memory.
RegionOffer offerRegion(const char* api, uint64_t window, const void* base, size_t bytes);
// A rank's offered buffer through kind `kind` (the one that connects that
// rank; for this rank itself, any kind that registers). Null, with the
// reason, when the kind cannot reach it.
std::unique_ptr<PeerRegion> openRegion(int kind, const RegionOffer& offer, bool own, std::string* why);
// The kind that registers this rank's own buffers.
int ownRegionKind();
// Whether transport kind `kind` can open peers' registered buffers.
bool kindRegistersMemory(int kind);
// loomMemAlloc / loomMemFree: memory from the first kind that allocates
// registrable memory (freeing a registered buffer fails).
void* allocateRegistrable(size_t bytes);
void freeRegistrable(void* pointer);

// The index in transportKinds() of the kind that connects a and b: the
// first allowed kind that can, a kind used only when named before the
// rest. -1 when none can. Every kind's canConnect is symmetric, so the
// order of a and b does not matter.
int chooseKind(const RankIdentity& a, const RankIdentity& b, const TransportFilter& filter);

// For every rank, the index in transportKinds() of the kind that connects
// it to `rank` (-1 for `rank` itself). Throws loomUnsupported naming the
// first pair no allowed kind can connect.
std::vector<int> chooseTransports(const std::vector<RankIdentity>& identities, int rank, const TransportFilter& filter);

}  // namespace loom

// The rendezvous: a listener that admits the ranks of one communicator (each
// proving the secret), then serves all-gather rounds over those connections
// for as long as the ranks keep them open. Ranks use rounds to exchange what
// the transports need at init, to split, and to agree before unlinking
// shared memory.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "bootstrap/admission.h"
#include "bootstrap/handshake.h"
#include "bootstrap/unique_id.h"

namespace loom::bootstrap {

// Starts the rendezvous on a background thread and returns at once with the
// endpoint it listens on: listenOn's address only (not every interface of
// the host; listen_address.h says which), and its port, where port 0 picks a
// free one. The thread exits when every admitted rank has closed its
// connection, or when no rank came within waitForRanksMs. A rank that waits
// past its own timeout (sent in its hello) is told which ranks are missing.
Endpoint startRendezvous(const Secret& secret, const Endpoint& listenOn, int64_t waitForRanksMs,
                         const AdmissionLimits& limits = {});

// One rank's connection to the rendezvous.
class RendezvousClient {
 public:
  // Connects and proves the secret; a refusal throws the rendezvous's
  // sentence saying why. Connects again while the rendezvous drops it before
  // it could prove anything (too many strangers at once), until timeoutMs.
  RendezvousClient(const RendezvousAddress& address, int rank, int nranks, int64_t timeoutMs);

  // Every rank contributes `mine`; all receive every rank's contribution, in
  // rank order. Collective: every rank must call it the same number of times.
  std::vector<std::string> allGather(const std::string& mine);
  void barrier() { allGather(std::string()); }

  // Where the rendezvous is: the interface choice's hint (the subnet that
  // reaches it, interface_choice.h).
  const IpAddress& address() const { return address_; }

 private:
  Verdict askToJoin(const Secret& secret, const Deadline& deadline);

  std::mutex mutex_;  // one round at a time, even if callers race
  Socket socket_;
  IpAddress address_;
  int rank_;
  int nranks_;
  int64_t timeoutMs_;
  std::string peerName_;
};

}  // namespace loom::bootstrap

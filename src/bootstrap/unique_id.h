// What a loomUniqueId carries: the rendezvous endpoint and the secret a peer
// must prove it holds before the rendezvous admits it.
#pragma once

#include <loom/loom.h>

#include <array>
#include <cstdint>
#include <string>

#include "bootstrap/socket.h"

namespace loom::bootstrap {

using Secret = std::array<uint8_t, 16>;

struct RendezvousAddress {
  Endpoint endpoint;
  Secret secret{};
};

loomUniqueId encodeUniqueId(const RendezvousAddress& address);
// Throws loomInvalidArgument when the bytes are not an id loomGetUniqueId made.
RendezvousAddress decodeUniqueId(const loomUniqueId& id);

Secret randomSecret();
// The secret of an environment launch: derived from LOOM_SECRET when the
// launcher set one (loomrun does), else from the rendezvous address alone.
Secret secretFromText(const std::string& text);

}  // namespace loom::bootstrap

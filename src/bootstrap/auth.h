// Challenge-response admission: the rendezvous sends a random nonce and the
// peer answers HMAC-SHA256(secret, nonce), so the secret never crosses the wire.
#pragma once

#include <array>
#include <cstdint>

#include "bootstrap/unique_id.h"

namespace loom::bootstrap {

using Nonce = std::array<uint8_t, 16>;
using Proof = std::array<uint8_t, 32>;

// Call before any other OpenSSL use. Keeps OpenSSL from registering its
// atexit cleanup, which frees global state while detached rendezvous
// threads may still be finishing (a double free at process exit).
void initialiseCrypto();

Nonce randomNonce();
Proof proveSecret(const Secret& secret, const Nonce& nonce);
// Constant-time comparison against the expected proof.
bool proofMatches(const Secret& secret, const Nonce& nonce, const Proof& offered);

}  // namespace loom::bootstrap

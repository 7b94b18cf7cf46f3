#include "bootstrap/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>

#include "base/error.h"

namespace loom::bootstrap {

void initialiseCrypto() {
  static const bool done = [] { return OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr) == 1; }();
  if (!done) fail(loomInternalError, "OpenSSL failed to initialise");
}

Nonce randomNonce() {
  Secret random = randomSecret();
  Nonce nonce;
  std::memcpy(nonce.data(), random.data(), nonce.size());
  return nonce;
}

Proof proveSecret(const Secret& secret, const Nonce& nonce) {
  initialiseCrypto();
  Proof proof{};
  unsigned int length = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), nonce.data(), nonce.size(), proof.data(),
           &length) == nullptr ||
      length != proof.size())
    fail(loomInternalError, "OpenSSL's HMAC-SHA256 failed while proving the bootstrap secret");
  return proof;
}

bool proofMatches(const Secret& secret, const Nonce& nonce, const Proof& offered) {
  Proof expected = proveSecret(secret, nonce);
  return CRYPTO_memcmp(expected.data(), offered.data(), expected.size()) == 0;
}

}  // namespace loom::bootstrap

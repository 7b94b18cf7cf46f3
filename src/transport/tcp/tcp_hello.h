// The first bytes on every TCP connection between two ranks: who connects
// (its rank, and which of its sockets to this peer this is) and the
// listener's token, which only the communicator's ranks learned at init
// (tcp_setup.h). A listener keeps a connection only once its hello proves
// the token and names a socket it still waits for (tcp_accept.h).
#pragma once

#include <cstdint>
#include <string>

#include "bootstrap/unique_id.h"

namespace loom::tcp {

struct Hello {
  char magic[8];
  bootstrap::Secret token;
  int32_t rank;
  int32_t socket;  // channel * n + i
};
static_assert(sizeof(Hello) == 32, "a hello is read whole before anything else on its socket");

Hello makeHello(const bootstrap::Secret& token, int rank, int socket);

// Whether the first `bytes` bytes received can begin a hello: a stranger
// speaking another protocol is told apart by its first eight.
bool startsLikeHello(const Hello& received, size_t bytes);

}  // namespace loom::tcp

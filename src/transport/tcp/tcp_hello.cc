#include "transport/tcp/tcp_hello.h"

#include <algorithm>
#include <cstring>

namespace loom::tcp {
namespace {

constexpr char kHelloMagic[8] = {'L', 'O', 'O', 'M', '-', 'T', 'C', 'P'};

}  // namespace

Hello makeHello(const bootstrap::Secret& token, int rank, int socket) {
  Hello hello{};
  std::memcpy(hello.magic, kHelloMagic, sizeof(kHelloMagic));
  hello.token = token;
  hello.rank = rank;
  hello.socket = socket;
  return hello;
}

bool startsLikeHello(const Hello& received, size_t bytes) {
  return std::memcmp(received.magic, kHelloMagic, std::min(bytes, sizeof(kHelloMagic))) == 0;
}

}  // namespace loom::tcp

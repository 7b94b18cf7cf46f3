// What the bootstrap decodes from bytes another process sent: a unique id
// (passed by the user's launcher), a length-prefixed frame off a socket, a
// rendezvous round's reply, and the admission messages (greeting, hello,
// verdict) that strangers can send before proving anything. Any bytes
// either decode or fail with loom::Error; never a crash, an over-read, or an
// allocation the frame's length field asked for beyond its limit.
//
// Input: byte 0 picks nranks (1..16) for the round decoder; the rest is
// used whole by each decoder.
#include <loom/loom.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/error.h"
#include "bootstrap/handshake.h"
#include "bootstrap/rendezvous.h"
#include "bootstrap/round_reply.h"
#include "bootstrap/socket.h"
#include "bootstrap/unique_id.h"
#include "fuzz_support.h"

namespace {

void decodeId(const uint8_t* data, size_t size) {
  loomUniqueId id;
  std::memset(&id, 0, sizeof(id));
  std::memcpy(id.internal, data, size < sizeof(id.internal) ? size : sizeof(id.internal));
  try {
    loom::bootstrap::RendezvousAddress address = loom::bootstrap::decodeUniqueId(id);
    // A decoded id must encode back to the same fields.
    loom::bootstrap::RendezvousAddress again =
        loom::bootstrap::decodeUniqueId(loom::bootstrap::encodeUniqueId(address));
    if (!(again.endpoint.address == address.endpoint.address) || again.endpoint.port != address.endpoint.port ||
        again.secret != address.secret)
      std::abort();
    (void)address.endpoint.toString();
  } catch (const loom::Error&) {
  }
}

// Frames as recvFrame reads them off a connection that then closes.
void decodeFrames(const uint8_t* data, size_t size) {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) std::abort();
  // libFuzzer's -max_len (scripts/fuzz.sh) keeps inputs far below the
  // socket buffer, so this write never blocks.
  if (size > 0 && write(fds[1], data, size) != static_cast<ssize_t>(size)) std::abort();
  close(fds[1]);
  loom::Deadline deadline = loom::Deadline::afterMs(1000);
  try {
    for (int frames = 0; frames < 64; ++frames) {
      std::string payload;
      if (!loom::bootstrap::recvFrameUnlessClosed(fds[0], 256, deadline, "the fuzzer", &payload)) break;
    }
  } catch (const loom::Error&) {
  }
  close(fds[0]);
}

void decodeRound(const uint8_t* data, size_t size) {
  if (size == 0) return;
  int nranks = 1 + data[0] % 16;
  std::string reply(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    std::vector<std::string> all = loom::bootstrap::decodeRound(reply, nranks, "the fuzzer");
    if (static_cast<int>(all.size()) != nranks) std::abort();
    if (loom::bootstrap::encodeRoundReply(all) != reply) std::abort();
  } catch (const loom::Error&) {
  }
}

// Admission messages as the rendezvous and a rank read them: a hello's
// header (judged alone as soon as its 12 bytes are in), a whole hello, a
// greeting and a verdict. What decodes must encode back to the same bytes.
void decodeAdmission(const uint8_t* data, size_t size) {
  using namespace loom::bootstrap;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    checkHelloHeader(bytes.substr(0, kHeaderSize));
  } catch (const loom::Error&) {
  }
  try {
    if (encodeHello(decodeHello(bytes)) != bytes) std::abort();
  } catch (const loom::Error&) {
  }
  try {
    if (encodeGreeting(decodeGreeting(bytes)) != bytes) std::abort();
  } catch (const loom::Error&) {
  }
  try {
    if (encodeVerdict(decodeVerdict(bytes)) != bytes) std::abort();
  } catch (const loom::Error&) {
  }
  (void)quoteBytes(bytes);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  loom::fuzz::quietLogging();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  decodeId(data, size);
  decodeFrames(data, size);
  decodeRound(data, size);
  decodeAdmission(data, size);
  return 0;
}

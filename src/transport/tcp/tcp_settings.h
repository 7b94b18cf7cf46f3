// TCP's own settings: its rings' shape (LOOM_SOCKET_SLOT_BYTES,
// LOOM_SOCKET_SLOTS), sockets per peer (LOOM_SOCKET_NSOCKS) and their
// kernel buffers (LOOM_SOCKET_BUFFER_BYTES). Where it listens
// (LOOM_SOCKET_IFNAME, LOOM_SOCKET_FAMILY) is the bootstrap's too, and
// comes in TransportSettings::network.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "transport/registry.h"

namespace loom::tcp {

struct TcpSettings final : KindSettings {
  size_t slotBytes = 256 * 1024;
  int slots = 8;
  int socketsPerPeer = 1;     // per peer and channel; slots stripe across them
  int socketBufferBytes = 0;  // SO_SNDBUF/SO_RCVBUF; 0: the kernel's autotuning

  std::string agreement() const override;
  SlotShape slotShape() const override { return {slots, slotBytes}; }
};

// The registry's entry: throws loomInvalidArgument naming a malformed variable.
std::shared_ptr<const KindSettings> readSettings();

}  // namespace loom::tcp

#include "transport/tcp/tcp_settings.h"

#include "base/env_value.h"
#include "base/error.h"

namespace loom::tcp {

// Sockets per peer must agree too, and tcp_setup.cc says so naming both
// ranks when they do not; only what cuts messages is agreed here.
std::string TcpSettings::agreement() const {
  return "LOOM_SOCKET_SLOTS=" + std::to_string(slots) + " LOOM_SOCKET_SLOT_BYTES=" + std::to_string(slotBytes);
}

std::shared_ptr<const KindSettings> readSettings() {
  auto settings = std::make_shared<TcpSettings>();
  readSlotBytes("LOOM_SOCKET_SLOT_BYTES", &settings->slotBytes);
  if (auto slots = envValue("LOOM_SOCKET_SLOTS"))
    settings->slots = static_cast<int>(parseEnvInteger(*slots, "LOOM_SOCKET_SLOTS", 2, 1024));
  if (auto sockets = envValue("LOOM_SOCKET_NSOCKS"))
    settings->socketsPerPeer = static_cast<int>(parseEnvInteger(*sockets, "LOOM_SOCKET_NSOCKS", 1, 64));
  if (auto bytes = envValue("LOOM_SOCKET_BUFFER_BYTES")) {
    settings->socketBufferBytes = static_cast<int>(parseEnvInteger(*bytes, "LOOM_SOCKET_BUFFER_BYTES", 0, 1 << 30));
    if (settings->socketBufferBytes > 0 && settings->socketBufferBytes < 4096)
      fail(loomInvalidArgument,
           "LOOM_SOCKET_BUFFER_BYTES=" + *bytes + " is below 4096 (0 or unset lets the kernel size TCP's buffers)");
  }
  return settings;
}

}  // namespace loom::tcp

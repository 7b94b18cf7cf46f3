#include "transport/tcp/tcp_wire.h"

namespace loom::tcp {

std::string checkFrameHeader(const FrameHeader& header, size_t slotBytes, uint64_t expectedNumber) {
  switch (header.kind) {
    case FrameKind::kData:
      if (header.bytes < sizeof(MessageLabel) || header.bytes > dataPayloadBytes(slotBytes))
        return "a data frame of " + std::to_string(header.bytes) + " bytes (a slot holds " +
               std::to_string(sizeof(MessageLabel)) + " to " + std::to_string(dataPayloadBytes(slotBytes)) + ")";
      if (header.number != expectedNumber)
        return "slot " + std::to_string(header.number) + " where slot " + std::to_string(expectedNumber) + " was due";
      return {};
    case FrameKind::kFailure:
      if (header.bytes > kMaxFailureBytes) return "a failure sentence of " + std::to_string(header.bytes) + " bytes";
      return {};
    case FrameKind::kHeartbeat:
      if (header.bytes != sizeof(HeartbeatPayload))
        return "a heartbeat of " + std::to_string(header.bytes) + " bytes instead of " +
               std::to_string(sizeof(HeartbeatPayload));
      return {};
  }
  return "a frame of unknown kind " + std::to_string(static_cast<uint32_t>(header.kind));
}

}  // namespace loom::tcp

// What travels on a TCP connection between two ranks: frames, each a fixed
// header then a payload. A data frame carries one slot (its label and the
// bytes the sender wrote); control frames carry what the shm status page
// shows a local peer: that this rank failed, and its heartbeat.
//
// Bytes from the network are never trusted: every header is checked
// (checkFrameHeader) before its payload is read anywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/collective_call.h"
#include "transport/message_label.h"

namespace loom::tcp {

enum class FrameKind : uint32_t { kData = 0x4c440001, kFailure = 0x4c440002, kHeartbeat = 0x4c440003 };

struct FrameHeader {
  FrameKind kind;
  uint32_t bytes;   // payload bytes after this header
  uint64_t number;  // data: the slot's number on its connection; otherwise 0
};
static_assert(sizeof(FrameHeader) == 16);

// A heartbeat's payload: what the engine publishes every 50 ms while it has
// operations pending (Transport::publishProgress), and the collective it
// runs. The receiver notes its own clock as the time of the beat: hosts'
// clocks differ.
struct HeartbeatPayload {
  int32_t waitingFor = -1;
  int32_t unused = 0;
  uint64_t collectivesStarted = 0;
  CollectiveCall call;
};

constexpr size_t kMaxFailureBytes = 1023;

// A data frame's payload: the label, then up to slotBytes of data.
inline size_t dataPayloadBytes(size_t dataBytes) {
  return sizeof(MessageLabel) + dataBytes;
}

// Empty when the header may be read on; otherwise what is wrong with it,
// for a sentence that names the peer. `expectedNumber` is the next slot
// this socket must carry.
std::string checkFrameHeader(const FrameHeader& header, size_t slotBytes, uint64_t expectedNumber);

}  // namespace loom::tcp

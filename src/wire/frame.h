// The outer frame of every agent -> server message (docs/wire.md):
//   "VGW1" | kind u8 | flags u8 | payload_len varint | payload | crc32c fixed32
// The CRC covers the payload as sent (after compression), so corruption is
// caught before decompressing untrusted bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace vigil::wire {

enum class FrameKind : uint8_t {
  kMetrics = 1,
  kLogs = 2,
  // kEvents = 3 is reserved for the event pipeline.
  kJobs = 4,  // a node's jobs and kernel events, JSON (docs/wire.md "Jobs")
};

// Upper bound on a decoded payload, so a hostile frame cannot make the server
// allocate without limit.
inline constexpr size_t kMaxPayloadBytes = 64u << 20;

struct Frame {
  FrameKind kind = FrameKind::kMetrics;
  std::string payload;  // uncompressed
};

// compress=true applies zstd (worth it across a network, not in-process).
std::string EncodeFrame(FrameKind kind, std::string_view payload, bool compress);
Result<Frame> DecodeFrame(std::string_view data);

}  // namespace vigil::wire

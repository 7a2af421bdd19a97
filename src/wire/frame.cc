#include "wire/frame.h"

#include <zstd.h>

#include "core/coding.h"

namespace vigil::wire {
namespace {
constexpr std::string_view kMagic = "VGW1";
constexpr uint8_t kFlagZstd = 1;
constexpr int kZstdLevel = 3;
}  // namespace

std::string EncodeFrame(FrameKind kind, std::string_view payload, bool compress) {
  std::string body;
  uint8_t flags = 0;
  if (compress) {
    body.resize(ZSTD_compressBound(payload.size()));
    size_t n = ZSTD_compress(body.data(), body.size(), payload.data(), payload.size(), kZstdLevel);
    if (ZSTD_isError(n) || n >= payload.size()) {
      body.assign(payload);  // incompressible: send as is
    } else {
      body.resize(n);
      flags |= kFlagZstd;
    }
  } else {
    body.assign(payload);
  }
  std::string out;
  out.reserve(body.size() + 16);
  out.append(kMagic);
  out.push_back(static_cast<char>(kind));
  out.push_back(static_cast<char>(flags));
  PutLengthPrefixed(&out, body);
  PutFixed32(&out, Crc32c(body));
  return out;
}

Result<Frame> DecodeFrame(std::string_view data) {
  if (data.size() < kMagic.size() + 2 || data.substr(0, kMagic.size()) != kMagic) {
    return InvalidArgument("not a Vigil wire frame (bad magic)");
  }
  data.remove_prefix(kMagic.size());
  auto kind = static_cast<uint8_t>(data[0]);
  auto flags = static_cast<uint8_t>(data[1]);
  data.remove_prefix(2);
  if (kind != static_cast<uint8_t>(FrameKind::kMetrics) &&
      kind != static_cast<uint8_t>(FrameKind::kLogs) &&
      kind != static_cast<uint8_t>(FrameKind::kJobs)) {
    return InvalidArgument("unknown wire frame kind " + std::to_string(kind));
  }
  if ((flags & ~kFlagZstd) != 0) return InvalidArgument("unknown wire frame flags");
  std::string_view body;
  uint32_t crc = 0;
  if (!GetLengthPrefixed(&data, &body) || !GetFixed32(&data, &crc)) {
    return InvalidArgument("truncated wire frame");
  }
  if (!data.empty()) return InvalidArgument("trailing bytes after wire frame");
  if (Crc32c(body) != crc) return Corruption("wire frame checksum mismatch");

  Frame f;
  f.kind = static_cast<FrameKind>(kind);
  if ((flags & kFlagZstd) == 0) {
    if (body.size() > kMaxPayloadBytes) return ResourceExhausted("wire payload too large");
    f.payload.assign(body);
    return f;
  }
  unsigned long long size = ZSTD_getFrameContentSize(body.data(), body.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
    return InvalidArgument("wire payload is not a sized zstd frame");
  }
  if (size > kMaxPayloadBytes) return ResourceExhausted("wire payload too large");
  f.payload.resize(size);
  size_t n = ZSTD_decompress(f.payload.data(), f.payload.size(), body.data(), body.size());
  if (ZSTD_isError(n) || n != size) return Corruption("wire payload failed to decompress");
  return f;
}

}  // namespace vigil::wire

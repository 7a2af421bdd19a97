// Byte-level encoding shared by the wire format, the WAL and the chunk codec:
// little-endian fixed-width integers, LEB128 varints, zigzag and CRC-32C.
//
// Decoders take a std::string_view by pointer and consume what they read; they
// return false (never crash) on truncated or malformed input.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace vigil {

inline uint64_t ZigZagEncode(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t ZigZagDecode(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

inline void PutFixed32(std::string* dst, uint32_t v) {
  char b[4];
  std::memcpy(b, &v, 4);  // x86 and arm64 are little-endian; formats are little-endian
  dst->append(b, 4);
}
inline void PutFixed64(std::string* dst, uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  dst->append(b, 8);
}
inline void PutDouble(std::string* dst, double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  PutFixed64(dst, bits);
}
inline void PutVarint64(std::string* dst, uint64_t v) {
  char buf[10];
  int n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  dst->append(buf, static_cast<size_t>(n));
}
inline void PutVarsint64(std::string* dst, int64_t v) { PutVarint64(dst, ZigZagEncode(v)); }
inline void PutLengthPrefixed(std::string* dst, std::string_view s) {
  PutVarint64(dst, s.size());
  dst->append(s.data(), s.size());
}

inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

inline bool GetFixed32(std::string_view* in, uint32_t* v) {
  if (in->size() < 4) return false;
  *v = DecodeFixed32(in->data());
  in->remove_prefix(4);
  return true;
}
inline bool GetFixed64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = DecodeFixed64(in->data());
  in->remove_prefix(8);
  return true;
}
inline bool GetDouble(std::string_view* in, double* v) {
  uint64_t bits;
  if (!GetFixed64(in, &bits)) return false;
  std::memcpy(v, &bits, 8);
  return true;
}
inline bool GetVarint64(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    auto byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}
inline bool GetVarsint64(std::string_view* in, int64_t* v) {
  uint64_t u;
  if (!GetVarint64(in, &u)) return false;
  *v = ZigZagDecode(u);
  return true;
}
inline bool GetLengthPrefixed(std::string_view* in, std::string_view* out) {
  uint64_t n;
  if (!GetVarint64(in, &n) || n > in->size()) return false;
  *out = in->substr(0, n);
  in->remove_prefix(n);
  return true;
}

// CRC-32C (Castagnoli), as used by iSCSI, ext4 and TFRecord.
uint32_t Crc32c(std::string_view data, uint32_t init = 0);
// The table-driven version Crc32c falls back to without SSE4.2 (for tests).
uint32_t Crc32cPortable(std::string_view data, uint32_t init = 0);

}  // namespace vigil

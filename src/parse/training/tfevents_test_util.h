// Test helpers: TensorBoard event files built from the format's spec (a
// protobuf encoder and TFRecord framing written apart from the reader, so
// the reader is not its own reference). For tests only.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "parse/training/tfevents.h"

namespace vigil::parse::training::testing {

// A protobuf encoder for the test's Events, written from the wire format
// spec (the reader under test must not be its own reference).
inline void Varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}
inline void Key(std::string* out, uint32_t field, uint32_t wt) { Varint(out, (field << 3) | wt); }
inline void Len(std::string* out, uint32_t field, std::string_view bytes) {
  Key(out, field, 2);
  Varint(out, bytes.size());
  out->append(bytes);
}
inline void F64(std::string* out, uint32_t field, double v) {
  Key(out, field, 1);
  char b[8];
  std::memcpy(b, &v, 8);
  out->append(b, 8);
}
inline void F32(std::string* out, uint32_t field, float v) {
  Key(out, field, 5);
  char b[4];
  std::memcpy(b, &v, 4);
  out->append(b, 4);
}

inline std::string Event(double wall_time, int64_t step, const std::vector<std::string>& values) {
  std::string summary;
  for (const auto& v : values) Len(&summary, 1, v);
  std::string e;
  F64(&e, 1, wall_time);
  Key(&e, 2, 0);
  Varint(&e, static_cast<uint64_t>(step));
  Len(&e, 5, summary);
  return e;
}

inline std::string SimpleValue(const std::string& tag, float v) {
  std::string s;
  Len(&s, 1, tag);
  F32(&s, 2, v);
  return s;
}

// A rank-0 tensor as torch.utils.tensorboard and TF2 write it: dtype and
// tensor_content (raw little-endian bytes), or packed float_val.
inline std::string TensorValue(const std::string& tag, float v, bool packed,
                               bool with_dim = false) {
  std::string tensor;
  Key(&tensor, 1, 0);
  Varint(&tensor, 1);  // DT_FLOAT
  std::string shape;
  if (with_dim) {
    std::string dim;
    Key(&dim, 1, 0);
    Varint(&dim, 3);
    Len(&shape, 2, dim);
  }
  Len(&tensor, 2, shape);
  char b[4];
  std::memcpy(b, &v, 4);
  if (packed) {
    Len(&tensor, 5, std::string_view(b, 4));
  } else {
    Len(&tensor, 4, std::string_view(b, 4));
  }
  std::string s;
  Len(&s, 1, tag);
  Len(&s, 8, tensor);
  return s;
}

inline std::string Record(std::string_view data) {
  std::string out;
  char len[8];
  uint64_t n = data.size();
  std::memcpy(len, &n, 8);
  out.append(len, 8);
  uint32_t c = MaskedCrc32c(std::string_view(len, 8));
  out.append(reinterpret_cast<const char*>(&c), 4);
  out.append(data);
  c = MaskedCrc32c(data);
  out.append(reinterpret_cast<const char*>(&c), 4);
  return out;
}

// The first record every writer puts in a file: wall time and
// file_version "brain.Event:2".
inline std::string FileVersionRecord() {
  std::string e;
  F64(&e, 1, 1764460800.5);
  Len(&e, 3, "brain.Event:2");
  return Record(e);
}

}  // namespace vigil::parse::training::testing

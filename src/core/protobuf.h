// A bounded reader of the protobuf wire format, for the few messages Vigil
// decodes without a protobuf library: OTLP/HTTP metrics (ingest/otlp.cc) and
// TensorBoard event files (parse/training/tfevents.cc). It reads one
// message's bytes; a nested message is read by a new PbReader over the
// bytes Bytes() returned. Every read checks what is left, the first error is
// kept (`*error`), and nothing is allocated: untrusted input can make it
// fail, never crash or loop.
//
// Thread safety: one reader per thread; it holds only views.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace vigil {

enum PbWireType : uint32_t { kPbVarint = 0, kPbFixed64 = 1, kPbLen = 2, kPbFixed32 = 5 };

// "varint", "64-bit", "length-delimited", "32-bit" or "invalid".
inline const char* PbWireTypeName(uint32_t wt) {
  switch (wt) {
    case kPbVarint:
      return "varint";
    case kPbFixed64:
      return "64-bit";
    case kPbLen:
      return "length-delimited";
    case kPbFixed32:
      return "32-bit";
    default:
      return "invalid";
  }
}

class PbReader {
 public:
  PbReader(std::string_view in, std::string* error) : in_(in), error_(error) {}
  bool empty() const { return in_.empty(); }

  // The next field's number and wire type.
  bool Key(uint32_t* field, uint32_t* wt) {
    uint64_t k;
    if (!Varint(&k)) return false;
    *field = static_cast<uint32_t>(k >> 3);
    *wt = static_cast<uint32_t>(k & 7);
    if (k >> 3 == 0 || k >> 3 > 0x1fffffff) return Fail("invalid field number");
    return true;
  }
  bool Varint(uint64_t* v) {
    uint64_t r = 0;
    for (int i = 0; i < 10; ++i) {
      if (in_.empty()) return Fail("truncated varint");
      auto b = static_cast<uint8_t>(in_[0]);
      in_.remove_prefix(1);
      if (i == 9 && b > 1) return Fail("varint longer than 64 bits");
      r |= static_cast<uint64_t>(b & 0x7f) << (7 * i);
      if ((b & 0x80) == 0) {
        *v = r;
        return true;
      }
    }
    return Fail("varint longer than 10 bytes");
  }
  bool Fixed64(uint64_t* v) {
    if (in_.size() < 8) return Fail("truncated 64-bit field");
    uint64_t r = 0;
    for (int i = 7; i >= 0; --i) r = (r << 8) | static_cast<uint8_t>(in_[i]);
    in_.remove_prefix(8);
    *v = r;
    return true;
  }
  bool Fixed32(uint32_t* v) {
    if (in_.size() < 4) return Fail("truncated 32-bit field");
    uint32_t r = 0;
    for (int i = 3; i >= 0; --i) r = (r << 8) | static_cast<uint8_t>(in_[i]);
    in_.remove_prefix(4);
    *v = r;
    return true;
  }
  bool Double(double* v) {
    uint64_t bits;
    if (!Fixed64(&bits)) return false;
    std::memcpy(v, &bits, sizeof(*v));
    return true;
  }
  bool Float(float* v) {
    uint32_t bits;
    if (!Fixed32(&bits)) return false;
    std::memcpy(v, &bits, sizeof(*v));
    return true;
  }
  // A length-delimited field: bytes, a string or a nested message.
  bool Bytes(std::string_view* v) {
    uint64_t n;
    if (!Varint(&n)) return false;
    if (n > in_.size()) {
      return Fail("length " + std::to_string(n) + " exceeds the " + std::to_string(in_.size()) +
                  " bytes left");
    }
    *v = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  // Skips a field of wire type `wt` (groups are refused: no message Vigil reads uses them).
  bool Skip(uint32_t wt) {
    uint64_t v;
    uint32_t v32;
    std::string_view s;
    switch (wt) {
      case kPbVarint:
        return Varint(&v);
      case kPbFixed64:
        return Fixed64(&v);
      case kPbLen:
        return Bytes(&s);
      case kPbFixed32:
        return Fixed32(&v32);
      default:
        return Fail("unsupported wire type " + std::to_string(wt));
    }
  }
  bool Fail(const std::string& msg) {
    if (error_->empty()) *error_ = msg;
    return false;
  }

 private:
  std::string_view in_;
  std::string* error_;
};

}  // namespace vigil

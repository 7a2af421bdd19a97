// libFuzzer target for the TSDB chunk decoder (format: docs/tsdb-chunk.md).
//
// Most random inputs would fail the CRC at once, so the first input byte
// picks a mode: odd = wrap the rest as a raw-body chunk with a valid header
// and checksum (reaches the body decoders), even = decode the rest as is.
// Whatever decodes must re-encode and decode to the same samples.
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "core/coding.h"
#include "store/tsdb/chunk_codec.h"

namespace {

std::string WrapRawBody(std::string_view rest) {
  // Two bytes of sample count keep n small enough to be plausible.
  uint64_t n = 0;
  if (rest.size() >= 2) {
    n = static_cast<uint8_t>(rest[0]) | (static_cast<uint64_t>(static_cast<uint8_t>(rest[1])) << 8);
    rest.remove_prefix(2);
  }
  std::string c(1, '\x01');
  vigil::PutVarint64(&c, n);
  c.push_back('\x00');
  c.append(rest);
  vigil::PutFixed32(&c, vigil::Crc32c(c));
  return c;
}

bool Same(const vigil::wire::Sample& a, const vigil::wire::Sample& b) {
  if (a.t_ms != b.t_ms) return false;
  if (std::isnan(a.value)) return std::isnan(b.value);
  return std::bit_cast<uint64_t>(a.value) == std::bit_cast<uint64_t>(b.value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string chunk = (data[0] & 1) ? WrapRawBody(rest) : std::string(rest);
  std::vector<vigil::wire::Sample> out;
  if (!vigil::tsdb::DecodeChunk(chunk, &out).ok()) {
    if (!out.empty()) std::abort();  // a failed decode must leave the output alone
    return 0;
  }
  std::vector<vigil::wire::Sample> again;
  if (!vigil::tsdb::DecodeChunk(vigil::tsdb::EncodeChunk(out), &again).ok()) std::abort();
  if (again.size() != out.size()) std::abort();
  for (size_t i = 0; i < out.size(); ++i) {
    if (!Same(out[i], again[i])) std::abort();
  }
  return 0;
}

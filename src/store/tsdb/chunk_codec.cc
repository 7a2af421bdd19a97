// Chunk codec. Byte format: docs/tsdb-chunk.md (keep the two in step).
//
// Why this shape: GPU and system metrics are mostly decimals with 0-3 digits
// after the point, sampled at a fixed interval. Scaling them to integers turns
// a noisy float XOR stream into small integer deltas, and regular timestamps
// become runs of zero delta-of-deltas; zstd over the whole body then removes
// what structure is left. Values that are not decimal (or NaN/Inf markers
// inside a decimal series) stay exact through an exception list or a lossless
// Gorilla XOR fallback.
#include "store/tsdb/chunk_codec.h"

#include <zstd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>

#include "core/coding.h"

namespace vigil::tsdb {
namespace {

constexpr uint8_t kFormatVersion = 1;
constexpr uint8_t kBodyRaw = 0;
constexpr uint8_t kBodyZstd = 1;
constexpr uint8_t kValuesDecimal = 0;
constexpr uint8_t kValuesFloat = 1;
constexpr uint8_t kIntsDelta = 0;
constexpr uint8_t kIntsDeltaOfDelta = 1;
constexpr uint8_t kIntsOffset = 2;
constexpr uint8_t kPackVarint = 0;
constexpr uint8_t kPackBits = 1;
constexpr size_t kPackBlock = 32;
constexpr int kPackIndexBits = 5;  // log2(kPackBlock)

// Bounds that keep a hostile chunk from costing more than a few tens of MiB.
constexpr uint64_t kMaxSamples = uint64_t{1} << 22;
constexpr uint64_t kMaxBodyBytes = uint64_t{64} << 20;

constexpr int kMaxExponent = 15;
// Up to n / this many values may become exceptions to keep the exponent low.
constexpr size_t kStrayExceptionDivisor = 64;
// Integers up to 2^53 convert to double exactly, so scaled values stay exact.
constexpr double kMaxScaled = 9007199254740992.0;
constexpr std::array<double, kMaxExponent + 1> kPow10 = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

// Below this many body bytes zstd's frame overhead outweighs what it saves.
constexpr size_t kMinZstdBody = 32;
constexpr int kZstdLevel = 15;
// Level used only to rank candidate encodings of the values; fast.
constexpr int kZstdRankLevel = 1;

uint64_t Bits(double v) { return std::bit_cast<uint64_t>(v); }

// Two's-complement wrap-around keeps delta coding exact for any int64 input,
// sorted or not, without signed-overflow UB.
int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}

int VarintLength(uint64_t v) {
  int n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// The decoder computes `scaled / 10^e` (one correctly rounded division), so a
// value is representable at e exactly when that expression returns its bits.
bool ScaleExact(double v, int e, int64_t* scaled) {
  double s = v * kPow10[e];
  if (!(std::fabs(s) <= kMaxScaled)) return false;  // also rejects NaN
  auto i = static_cast<int64_t>(std::llround(s));
  if (Bits(static_cast<double>(i) / kPow10[e]) != Bits(v)) return false;
  *scaled = i;
  return true;
}

// ---------------------------------------------------------------- bit streams

class BitWriter {
 public:
  // Appends the low `nbits` bits of v (0..64), most significant first.
  void Write(uint64_t v, int nbits) {
    if (nbits == 0) return;
    if (nbits < 64) v &= (uint64_t{1} << nbits) - 1;
    if (nbits > 32) {
      Write(v >> 32, nbits - 32);
      nbits = 32;
      v &= 0xffffffffu;
    }
    acc_ = (acc_ << nbits) | v;
    bits_ += nbits;
    while (bits_ >= 8) {
      bits_ -= 8;
      out_.push_back(static_cast<char>(acc_ >> bits_));
    }
  }
  // Pads the last byte with zero bits and returns the bytes.
  std::string& Finish() {
    if (bits_ > 0) {
      out_.push_back(static_cast<char>(acc_ << (8 - bits_)));
      bits_ = 0;
    }
    return out_;
  }

 private:
  std::string out_;
  uint64_t acc_ = 0;  // pending bits in the low `bits_` bits (< 8 between calls)
  int bits_ = 0;
};

class BitReader {
 public:
  explicit BitReader(std::string_view in) : in_(in) {}
  bool Read(int nbits, uint64_t* v) {
    if (nbits > 64 || pos_ + static_cast<uint64_t>(nbits) > in_.size() * 8) return false;
    if (nbits == 0) {
      *v = 0;
      return true;
    }
    size_t byte = pos_ >> 3;
    int off = static_cast<int>(pos_ & 7);
    // Fast path: one unaligned big-endian load holds all the bits.
    if (nbits <= 56 && byte + 8 <= in_.size()) {
      uint64_t w;
      std::memcpy(&w, in_.data() + byte, 8);
      if constexpr (std::endian::native == std::endian::little) w = __builtin_bswap64(w);
      *v = (w << off) >> (64 - nbits);
      pos_ += static_cast<uint64_t>(nbits);
      return true;
    }
    uint64_t r = 0;
    while (nbits > 0) {
      int avail = 8 - static_cast<int>(pos_ & 7);
      int take = std::min(avail, nbits);
      auto b = static_cast<uint8_t>(in_[pos_ >> 3]);
      r = (r << take) | ((b >> (avail - take)) & ((1u << take) - 1));
      pos_ += static_cast<uint64_t>(take);
      nbits -= take;
    }
    *v = r;
    return true;
  }
  size_t bytes_consumed() const { return (pos_ + 7) / 8; }

  // Whether `count` reads of `nbits` (<= 56) bits may use ReadUnchecked: every
  // one of them then has a whole 8-byte load inside the input.
  bool CanReadUnchecked(uint64_t count, int nbits) const {
    if (nbits > 56) return false;
    uint64_t end = pos_ + count * static_cast<uint64_t>(nbits);
    return end / 8 + 8 <= in_.size();
  }
  // Read without bounds checks; only after CanReadUnchecked said yes.
  uint64_t ReadUnchecked(int nbits) {
    uint64_t w;
    std::memcpy(&w, in_.data() + (pos_ >> 3), 8);
    if constexpr (std::endian::native == std::endian::little) w = __builtin_bswap64(w);
    uint64_t v = nbits == 0 ? 0 : (w << (pos_ & 7)) >> (64 - nbits);
    pos_ += static_cast<uint64_t>(nbits);
    return v;
  }

 private:
  std::string_view in_;
  uint64_t pos_ = 0;
};

// GetVarint64 with the one-byte case (most deltas of regular data) inlined.
inline bool GetVarint64Fast(std::string_view* in, uint64_t* v) {
  if (!in->empty() && static_cast<uint8_t>(in->front()) < 0x80) {
    *v = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    return true;
  }
  return GetVarint64(in, v);
}

// ----------------------------------------------------------------- timestamps

void EncodeTimestamps(std::span<const wire::Sample> s, std::string* out) {
  if (s.empty()) return;
  PutVarsint64(out, s[0].t_ms);
  if (s.size() == 1) return;
  int64_t prev_delta = WrapSub(s[1].t_ms, s[0].t_ms);
  PutVarsint64(out, prev_delta);
  for (size_t i = 2; i < s.size(); ++i) {
    int64_t delta = WrapSub(s[i].t_ms, s[i - 1].t_ms);
    PutVarsint64(out, WrapSub(delta, prev_delta));
    prev_delta = delta;
  }
}

// Fills the times of `out` (sized by the caller). The loop reads bytes
// directly: regular timestamps are runs of one-byte zero delta-of-deltas, and
// this loop is a large part of what a long range query costs.
bool DecodeTimestamps(std::string_view* in, std::span<wire::Sample> out) {
  const char* p = in->data();
  const char* const end = p + in->size();
  auto next = [&](int64_t* v) {
    if (p != end && static_cast<uint8_t>(*p) < 0x80) {
      *v = ZigZagDecode(static_cast<uint8_t>(*p++));
      return true;
    }
    std::string_view rest(p, static_cast<size_t>(end - p));
    uint64_t u;
    if (!GetVarint64(&rest, &u)) return false;
    p = rest.data();
    *v = ZigZagDecode(u);
    return true;
  };
  const size_t n = out.size();
  int64_t t = 0, delta = 0, v = 0;
  if (n > 0) {
    if (!next(&t)) return false;
    out[0].t_ms = t;
  }
  if (n > 1) {
    if (!next(&delta)) return false;
    t = WrapAdd(t, delta);
    out[1].t_ms = t;
  }
  for (size_t i = 2; i < n; ++i) {
    if (!next(&v)) return false;
    delta = WrapAdd(delta, v);
    t = WrapAdd(t, delta);
    out[i].t_ms = t;
  }
  in->remove_prefix(static_cast<size_t>(p - in->data()));
  return true;
}

// -------------------------------------------------------------- decimal values

struct DecimalPlan {
  int exponent = 0;
  std::vector<int64_t> ints;         // one per sample; exceptions repeat the previous
  std::vector<uint32_t> exceptions;  // indexes of samples stored as raw bits
};

// The smallest exponent at which a value is an exact scaled integer;
// kMaxExponent + 1 when there is none (NaN, Inf, -0.0, 0.1 + 0.2, ...).
int MinExponent(double v) {
  int64_t scaled;
  int k = 0;
  while (k <= kMaxExponent && !ScaleExact(v, k, &scaled)) ++k;
  return k;
}

// Picks the exponent: the smallest that leaves only a few values (beyond the
// ones no exponent can scale) as exceptions. One stray 1e-9 in a series of
// 2-decimal values thus costs one exception, not 7 more digits on every
// sample. Returns false when too many values are not decimal for this path to
// pay off.
bool PlanDecimal(std::span<const wire::Sample> s, DecimalPlan* plan) {
  std::array<size_t, kMaxExponent + 2> count{};
  for (const auto& x : s) ++count[MinExponent(x.value)];
  const size_t never = count[kMaxExponent + 1];
  const size_t allowed = never + s.size() / kStrayExceptionDivisor;
  size_t above = s.size() - count[0];  // values that need more than e digits
  int e = 0;
  while (e < kMaxExponent && above > allowed) {
    ++e;
    above -= count[e];
  }
  if (above * 4 > s.size()) return false;

  plan->exponent = e;
  plan->ints.resize(s.size());
  int64_t prev = 0;
  // Representability is monotonic in e (10*i / 10^(e+1) rounds like i / 10^e),
  // but scaling near 2^53 can break that, so each value is checked at e.
  for (size_t i = 0; i < s.size(); ++i) {
    int64_t scaled;
    if (ScaleExact(s[i].value, e, &scaled)) {
      prev = scaled;
    } else {
      plan->exceptions.push_back(static_cast<uint32_t>(i));
    }
    plan->ints[i] = prev;
  }
  return plan->exceptions.size() * 4 <= s.size();
}

// The scaled integers as stored: a base plus one unsigned code per sample
// (after the first, for the delta kinds), all codes divided by a common
// factor. Delta suits gauges that wander, delta-of-delta counters that grow by
// a steady step, offset (from the minimum) gauges that are noise around a level.
struct IntStream {
  uint8_t kind = kIntsDelta;
  int64_t base = 0;
  uint64_t factor = 1;
  std::vector<uint64_t> codes;
};

uint64_t Magnitude(int64_t x) {
  return x < 0 ? uint64_t{0} - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
}

// Byte counters step in 4 KiB pages, memory in kB*1024: dividing out the
// common factor removes those always-zero low bits.
uint64_t CommonFactor(const std::vector<uint64_t>& m) {
  uint64_t g = 0;
  for (uint64_t x : m) {
    g = std::gcd(g, x);
    if (g == 1) return 1;
  }
  return g == 0 || g > (uint64_t{1} << 62) ? 1 : g;
}

IntStream MakeStream(const std::vector<int64_t>& v, uint8_t kind) {
  IntStream s;
  s.kind = kind;
  s.base = v[0];
  if (kind == kIntsOffset) {
    s.base = *std::min_element(v.begin(), v.end());
    for (int64_t x : v) s.codes.push_back(static_cast<uint64_t>(x) - static_cast<uint64_t>(s.base));
    s.factor = CommonFactor(s.codes);
    for (uint64_t& c : s.codes) c /= s.factor;
    return s;
  }
  std::vector<int64_t> r;
  int64_t prev_delta = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    int64_t d = WrapSub(v[i], v[i - 1]);
    r.push_back(kind == kIntsDelta ? d : WrapSub(d, prev_delta));
    prev_delta = d;
  }
  for (int64_t x : r) s.codes.push_back(Magnitude(x));
  s.factor = CommonFactor(s.codes);
  for (size_t i = 0; i < r.size(); ++i) {
    s.codes[i] = ZigZagEncode(r[i] / static_cast<int64_t>(s.factor));
  }
  return s;
}

int BitWidth(uint64_t x) { return 64 - std::countl_zero(x); }

// Patched frame of reference: each block stores every value's low `width`
// bits and, for the few values that do not fit (a PCIe burst among steady
// rates), their high bits as exceptions. The width minimises the block's bits.
int ChooseBlockWidth(const uint64_t* z, size_t n) {
  std::array<uint32_t, 65> count{};  // values of each bit width
  for (size_t i = 0; i < n; ++i) ++count[BitWidth(z[i])];
  // Walk w down from 64: the values wider than w become exceptions, each
  // costing its header plus its high bits.
  uint64_t above = 0, above_bits = 0;  // count and total width of values wider than w
  int best_w = 64;
  uint64_t best_cost = 64 * n;
  for (int w = 63; w >= 0; --w) {
    above += count[w + 1];
    above_bits += count[w + 1] * static_cast<uint64_t>(w + 1);
    uint64_t cost = static_cast<uint64_t>(w) * n + above * (kPackIndexBits + 6) + above_bits -
                    above * static_cast<uint64_t>(w);
    if (cost < best_cost) {
      best_cost = cost;
      best_w = w;
    }
  }
  return best_w;
}

void PutPackedBits(const std::vector<uint64_t>& r, std::string* out) {
  BitWriter w;
  std::array<uint64_t, kPackBlock> z;
  for (size_t b = 0; b < r.size(); b += kPackBlock) {
    size_t n = std::min(r.size() - b, kPackBlock);
    for (size_t i = 0; i < n; ++i) z[i] = r[b + i];
    int width = ChooseBlockWidth(z.data(), n);
    size_t n_exc = 0;
    for (size_t i = 0; i < n; ++i) n_exc += BitWidth(z[i]) > width;
    w.Write(static_cast<uint64_t>(width), 7);
    w.Write(n_exc, kPackIndexBits + 1);
    for (size_t i = 0; i < n; ++i) {
      int high = BitWidth(z[i]) - width;
      if (high <= 0) continue;
      w.Write(i, kPackIndexBits);
      w.Write(static_cast<uint64_t>(high - 1), 6);
      w.Write(z[i] >> width, high);
    }
    uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    for (size_t i = 0; i < n; ++i) w.Write(z[i] & mask, width);
  }
  PutLengthPrefixed(out, w.Finish());
}

bool GetPackedBits(std::string_view* in, size_t count, uint64_t* r) {
  std::string_view bits;
  if (!GetLengthPrefixed(in, &bits)) return false;
  BitReader rd(bits);
  std::array<uint64_t, kPackBlock> high;
  for (size_t b = 0; b < count; b += kPackBlock) {
    size_t n = std::min(count - b, kPackBlock);
    uint64_t width, n_exc;
    if (!rd.Read(7, &width) || width > 64 || !rd.Read(kPackIndexBits + 1, &n_exc) || n_exc > n) {
      return false;
    }
    high.fill(0);
    for (uint64_t k = 0; k < n_exc; ++k) {
      uint64_t idx, hb, h;
      if (!rd.Read(kPackIndexBits, &idx) || idx >= n || !rd.Read(6, &hb)) return false;
      if (hb + 1 + width > 64 || !rd.Read(static_cast<int>(hb + 1), &h)) return false;
      high[idx] = h << width;
    }
    int w = static_cast<int>(width);
    if (rd.CanReadUnchecked(n, w)) {
      for (size_t i = 0; i < n; ++i) r[b + i] = high[i] | rd.ReadUnchecked(w);
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      uint64_t low;
      if (!rd.Read(w, &low)) return false;
      r[b + i] = high[i] | low;
    }
  }
  return rd.bytes_consumed() == bits.size();
}

void EncodeIntStream(const IntStream& s, uint8_t pack, std::string* out) {
  out->push_back(static_cast<char>(s.kind | (pack << 4)));
  PutVarint64(out, s.factor);
  PutVarsint64(out, s.base);
  if (pack == kPackBits) {
    PutPackedBits(s.codes, out);
  } else {
    for (uint64_t c : s.codes) PutVarint64(out, c);
  }
}

// A fast compression of each candidate ranks them by what they will cost
// after the body's own compression; cheaper proxies (varint bytes, bit
// widths) picked badly between noisy gauges and steady counters.
// zstd contexts are reused per thread: creating one per chunk costs more than
// compressing the chunk (its tables are megabytes at high levels).
ZSTD_CCtx* ThreadCCtx() {
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> cctx(ZSTD_createCCtx(),
                                                                       ZSTD_freeCCtx);
  return cctx.get();
}
ZSTD_DCtx* ThreadDCtx() {
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> dctx(ZSTD_createDCtx(),
                                                                       ZSTD_freeDCtx);
  return dctx.get();
}

// Compresses `data` at `level` into `out` (resized to fit); false on failure.
bool Compress(std::string_view data, int level, std::string* out) {
  out->resize(ZSTD_compressBound(data.size()));
  size_t n =
      ZSTD_compressCCtx(ThreadCCtx(), out->data(), out->size(), data.data(), data.size(), level);
  if (ZSTD_isError(n)) return false;
  out->resize(n);
  return true;
}

size_t CompressedSize(std::string_view data) {
  thread_local std::string buf;
  return Compress(data, kZstdRankLevel, &buf) ? buf.size() : data.size();
}

void EncodeInts(const std::vector<int64_t>& v, std::string* out) {
  std::string best, candidate;
  size_t best_size = SIZE_MAX;
  for (uint8_t kind : {kIntsDelta, kIntsDeltaOfDelta, kIntsOffset}) {
    IntStream s = MakeStream(v, kind);
    for (uint8_t pack : {kPackVarint, kPackBits}) {
      candidate.clear();
      EncodeIntStream(s, pack, &candidate);
      size_t size = candidate.size() < kMinZstdBody ? candidate.size() : CompressedSize(candidate);
      if (size < best_size) {
        best_size = size;
        best.swap(candidate);
      }
    }
  }
  out->append(best);
}

// Decodes an integer stream of out.size() values and stores each as
// value / 10^e in out[i].value (the decimal decoder; exceptions are applied
// by the caller afterwards).
bool DecodeIntsScaled(std::string_view* in, int e, std::span<wire::Sample> out) {
  size_t n = out.size();
  if (in->empty()) return false;
  auto tag = static_cast<uint8_t>((*in)[0]);
  in->remove_prefix(1);
  uint8_t kind = tag & 0x0f, pack = tag >> 4;
  if (kind > kIntsOffset || pack > kPackBits) return false;
  uint64_t g;
  int64_t base;
  if (!GetVarint64(in, &g) || g == 0 || !GetVarsint64(in, &base)) return false;
  size_t n_codes = kind == kIntsOffset ? n : n - 1;
  const double p = kPow10[e];
  auto put = [&](size_t i, int64_t x) {
    // Dividing by 1 is exact, so e == 0 may skip the division.
    out[i].value = e == 0 ? static_cast<double>(x) : static_cast<double>(x) / p;
  };
  if (pack == kPackVarint && kind != kIntsOffset) {
    // One pass from the varints to the values (the common case for counters):
    // a local cursor, because through `in` the compiler must assume that each
    // store may change the view and reload it every value.
    std::string_view rest = *in;
    put(0, base);
    int64_t value = base, delta = 0;
    for (size_t i = 0; i < n_codes; ++i) {
      uint64_t c;
      if (!GetVarint64Fast(&rest, &c)) return false;
      auto x = static_cast<int64_t>(static_cast<uint64_t>(ZigZagDecode(c)) * g);
      if (kind == kIntsDelta) {
        value = WrapAdd(value, x);
      } else {
        delta = WrapAdd(delta, x);
        value = WrapAdd(value, delta);
      }
      put(i + 1, value);
    }
    *in = rest;
    return true;
  }
  // Reused per thread: decoding must not allocate per chunk (queries decode
  // thousands of chunks). Bounded by kMaxSamples.
  thread_local std::vector<uint64_t> codes;
  codes.resize(n_codes);
  if (pack == kPackBits) {
    if (!GetPackedBits(in, n_codes, codes.data())) return false;
  } else {
    std::string_view rest = *in;
    uint64_t* c = codes.data();
    for (size_t i = 0; i < n_codes; ++i) {
      if (!GetVarint64Fast(&rest, &c[i])) return false;
    }
    *in = rest;
  }
  if (kind == kIntsOffset) {
    for (size_t i = 0; i < n; ++i) {
      put(i, static_cast<int64_t>(static_cast<uint64_t>(base) + codes[i] * g));
    }
    return true;
  }
  put(0, base);
  int64_t value = base, delta = 0;
  if (kind == kIntsDelta) {
    for (size_t i = 0; i < n_codes; ++i) {
      value =
          WrapAdd(value, static_cast<int64_t>(static_cast<uint64_t>(ZigZagDecode(codes[i])) * g));
      put(i + 1, value);
    }
  } else {
    for (size_t i = 0; i < n_codes; ++i) {
      delta =
          WrapAdd(delta, static_cast<int64_t>(static_cast<uint64_t>(ZigZagDecode(codes[i])) * g));
      value = WrapAdd(value, delta);
      put(i + 1, value);
    }
  }
  return true;
}

void EncodeDecimal(std::span<const wire::Sample> s, const DecimalPlan& plan, std::string* out) {
  out->push_back(static_cast<char>(kValuesDecimal));
  out->push_back(static_cast<char>(plan.exponent));
  PutVarint64(out, plan.exceptions.size());
  uint32_t prev_index = 0;
  for (uint32_t idx : plan.exceptions) {
    PutVarint64(out, idx - prev_index);
    PutDouble(out, s[idx].value);
    prev_index = idx;
  }
  EncodeInts(plan.ints, out);
}

bool DecodeDecimal(std::string_view* in, std::span<wire::Sample> out) {
  if (in->empty()) return false;
  auto e = static_cast<uint8_t>((*in)[0]);
  in->remove_prefix(1);
  if (e > kMaxExponent) return false;
  uint64_t n_exceptions;
  if (!GetVarint64(in, &n_exceptions) || n_exceptions > out.size()) return false;
  // Exceptions are read first but applied last; keep them in a bounded list.
  std::vector<std::pair<size_t, double>> exceptions;
  exceptions.reserve(n_exceptions);
  uint64_t index = 0;
  for (uint64_t k = 0; k < n_exceptions; ++k) {
    uint64_t gap;
    double v;
    if (!GetVarint64(in, &gap) || !GetDouble(in, &v)) return false;
    if (k > 0 && gap == 0) return false;  // indexes strictly increase
    if (gap >= out.size() - index) return false;
    index += gap;
    exceptions.emplace_back(index, v);
  }
  if (!DecodeIntsScaled(in, e, out)) return false;
  for (const auto& [i, v] : exceptions) out[i].value = v;
  return true;
}

// ---------------------------------------------------------------- float values

// Gorilla XOR (Pelkonen et al., VLDB 2015), as in Prometheus' XOR chunks.
void EncodeFloat(std::span<const wire::Sample> s, std::string* out) {
  out->push_back(static_cast<char>(kValuesFloat));
  BitWriter w;
  uint64_t prev = Bits(s[0].value);
  w.Write(prev, 64);
  int lead = -1, trail = 0;  // current window; -1 = none yet
  for (size_t i = 1; i < s.size(); ++i) {
    uint64_t cur = Bits(s[i].value);
    uint64_t x = cur ^ prev;
    prev = cur;
    if (x == 0) {
      w.Write(0, 1);
      continue;
    }
    int lz = std::min(std::countl_zero(x), 31);
    int tz = std::countr_zero(x);
    if (lead >= 0 && lz >= lead && tz >= trail) {
      w.Write(0b10, 2);
      w.Write(x >> trail, 64 - lead - trail);
      continue;
    }
    lead = lz;
    trail = tz;
    int sig = 64 - lead - trail;  // 1..64; 64 is written as 0 in 6 bits
    w.Write(0b11, 2);
    w.Write(static_cast<uint64_t>(lead), 5);
    w.Write(static_cast<uint64_t>(sig & 63), 6);
    w.Write(x >> trail, sig);
  }
  PutLengthPrefixed(out, w.Finish());
}

bool DecodeFloat(std::string_view* in, std::span<wire::Sample> out) {
  std::string_view bits;
  if (!GetLengthPrefixed(in, &bits)) return false;
  BitReader r(bits);
  uint64_t prev;
  if (!r.Read(64, &prev)) return false;
  out[0].value = std::bit_cast<double>(prev);
  int lead = -1, trail = 0;
  for (size_t i = 1; i < out.size(); ++i) {
    uint64_t ctl;
    if (!r.Read(1, &ctl)) return false;
    if (ctl == 1) {
      if (!r.Read(1, &ctl)) return false;
      if (ctl == 1) {
        uint64_t l, sig;
        if (!r.Read(5, &l) || !r.Read(6, &sig)) return false;
        if (sig == 0) sig = 64;
        if (l + sig > 64) return false;
        lead = static_cast<int>(l);
        trail = static_cast<int>(64 - l - sig);
      } else if (lead < 0) {
        return false;  // reuse of a window that was never set
      }
      uint64_t m;
      if (!r.Read(64 - lead - trail, &m)) return false;
      prev ^= trail == 64 ? 0 : m << trail;
    }
    out[i].value = std::bit_cast<double>(prev);
  }
  return r.bytes_consumed() == bits.size();
}

// ---------------------------------------------------------------------- body

std::string EncodeBody(std::span<const wire::Sample> s) {
  std::string body;
  if (s.empty()) return body;
  EncodeTimestamps(s, &body);
  DecimalPlan plan;
  if (PlanDecimal(s, &plan)) {
    EncodeDecimal(s, plan, &body);
  } else {
    EncodeFloat(s, &body);
  }
  return body;
}

Status Corrupt(std::string_view what) {
  return Status(StatusCode::kCorruption, "tsdb chunk: " + std::string(what));
}

}  // namespace

std::string EncodeChunk(std::span<const wire::Sample> samples) {
  std::string body = EncodeBody(samples);
  std::string out;
  out.push_back(static_cast<char>(kFormatVersion));
  PutVarint64(&out, samples.size());
  std::string packed;
  if (body.size() >= kMinZstdBody) {
    if (!Compress(body, kZstdLevel, &packed)) packed.clear();
  }
  if (!packed.empty() && packed.size() + VarintLength(body.size()) < body.size()) {
    out.push_back(static_cast<char>(kBodyZstd));
    PutVarint64(&out, body.size());
    out.append(packed);
  } else {
    out.push_back(static_cast<char>(kBodyRaw));
    out.append(body);
  }
  PutFixed32(&out, Crc32c(out));
  return out;
}

Status DecodeChunk(std::string_view data, std::vector<wire::Sample>* out) {
  if (data.empty()) return Corrupt("empty");
  auto version = static_cast<uint8_t>(data[0]);
  if (version != kFormatVersion) {
    return Corrupt("unsupported format version " + std::to_string(version) +
                   " (this build reads version 1; upgrade Vigil)");
  }
  if (data.size() < 1 + 1 + 1 + 4) return Corrupt("truncated");
  std::string_view in = data.substr(0, data.size() - 4);
  if (DecodeFixed32(data.data() + in.size()) != Crc32c(in)) return Corrupt("checksum mismatch");
  in.remove_prefix(1);

  uint64_t n;
  if (!GetVarint64(&in, &n)) return Corrupt("bad sample count");
  if (n > kMaxSamples) return Corrupt("sample count " + std::to_string(n) + " over limit");
  if (in.empty()) return Corrupt("truncated");
  auto body_codec = static_cast<uint8_t>(in[0]);
  in.remove_prefix(1);

  // Reused per thread (bounded by kMaxBodyBytes): no allocation per chunk.
  thread_local std::string unpacked;
  if (body_codec == kBodyZstd) {
    uint64_t raw_len;
    if (!GetVarint64(&in, &raw_len) || raw_len > kMaxBodyBytes) return Corrupt("bad body size");
    unpacked.resize(raw_len);
    size_t got =
        ZSTD_decompressDCtx(ThreadDCtx(), unpacked.data(), unpacked.size(), in.data(), in.size());
    if (ZSTD_isError(got) || got != raw_len) return Corrupt("zstd body does not decompress");
    in = unpacked;
  } else if (body_codec != kBodyRaw) {
    return Corrupt("unknown body codec");
  }
  if (n == 0) return in.empty() ? Status::Ok() : Corrupt("trailing bytes");
  // Every sample costs at least one bit of body, so a small body cannot claim
  // millions of samples and make us allocate for them.
  if (n > in.size() * 8) return Corrupt("sample count larger than body");

  size_t base = out->size();
  out->resize(base + n);
  std::span<wire::Sample> samples(out->data() + base, n);
  if (!DecodeTimestamps(&in, samples) || in.empty()) {
    out->resize(base);
    return Corrupt("bad timestamps");
  }
  auto mode = static_cast<uint8_t>(in[0]);
  in.remove_prefix(1);
  bool ok = mode == kValuesDecimal ? DecodeDecimal(&in, samples)
            : mode == kValuesFloat ? DecodeFloat(&in, samples)
                                   : false;
  if (!ok || !in.empty()) {
    out->resize(base);
    return Corrupt(ok ? "trailing bytes" : "bad values");
  }
  return Status::Ok();
}

}  // namespace vigil::tsdb

#include "store/tsdb/chunk_codec.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/coding.h"
#include "store/tsdb/stale.h"

namespace vigil::tsdb {
namespace {

using wire::Sample;

// Exact comparison: bits must match, except that any NaN matches any NaN (the
// format promises values bit for bit, NaN payloads aside).
void ExpectSameSamples(const std::vector<Sample>& want, const std::vector<Sample>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(want[i].t_ms, got[i].t_ms) << "sample " << i;
    if (std::isnan(want[i].value)) {
      ASSERT_TRUE(std::isnan(got[i].value)) << "sample " << i;
    } else {
      ASSERT_EQ(std::bit_cast<uint64_t>(want[i].value), std::bit_cast<uint64_t>(got[i].value))
          << "sample " << i << ": want " << want[i].value << " got " << got[i].value;
    }
  }
}

std::string RoundTrip(const std::vector<Sample>& samples) {
  std::string chunk = EncodeChunk(samples);
  std::vector<Sample> got;
  Status s = DecodeChunk(chunk, &got);
  EXPECT_TRUE(s.ok()) << s.ToString();
  ExpectSameSamples(samples, got);
  return chunk;
}

std::vector<Sample> Regular(const std::vector<double>& values, int64_t t0 = 1700000000000,
                            int64_t step = 1000) {
  std::vector<Sample> s;
  for (size_t i = 0; i < values.size(); ++i)
    s.push_back({t0 + static_cast<int64_t>(i) * step, values[i]});
  return s;
}

TEST(ChunkCodecTest, Empty) {
  std::string chunk = RoundTrip({});
  EXPECT_LE(chunk.size(), 8u);
}

TEST(ChunkCodecTest, SingleSample) {
  RoundTrip({{1700000000123, 42.5}});
  RoundTrip({{-5, -0.0}});
  RoundTrip({{0, std::numeric_limits<double>::quiet_NaN()}});
}

TEST(ChunkCodecTest, Integers) {
  std::mt19937_64 rng(1);
  std::vector<double> v;
  for (int i = 0; i < 7200; ++i)
    v.push_back(static_cast<double>(static_cast<int64_t>(rng() % 1000) - 500));
  RoundTrip(Regular(v));
}

TEST(ChunkCodecTest, DecimalsWithOneToThreeDigits) {
  for (int digits = 1; digits <= 3; ++digits) {
    std::mt19937_64 rng(digits);
    double scale = std::pow(10.0, digits);
    std::vector<double> v;
    for (int i = 0; i < 7200; ++i) v.push_back(static_cast<double>(rng() % 100000) / scale);
    RoundTrip(Regular(v));
  }
}

TEST(ChunkCodecTest, DecimalChunksAreSmall) {
  // A GPU power gauge with 3 decimals wandering around 650 W.
  std::mt19937_64 rng(7);
  std::vector<double> v;
  int64_t mw = 650000;
  for (int i = 0; i < 7200; ++i) {
    mw += static_cast<int64_t>(rng() % 201) - 100;
    v.push_back(static_cast<double>(mw) / 1000.0);
  }
  std::string chunk = RoundTrip(Regular(v));
  // Deltas span 201 values (~7.7 bits of entropy): well under Gorilla's cost.
  EXPECT_LT(chunk.size(), 7200u * 1.5);
}

TEST(ChunkCodecTest, RegularTimestampsAndConstantValuesCostAlmostNothing) {
  std::string chunk = RoundTrip(Regular(std::vector<double>(7200, 1.0)));
  EXPECT_LT(chunk.size(), 64u);
  chunk = RoundTrip(Regular(std::vector<double>(7200, 0.0)));
  EXPECT_LT(chunk.size(), 64u);
}

TEST(ChunkCodecTest, Counter) {
  std::vector<double> v;
  double c = 123456.78;
  for (int i = 0; i < 7200; ++i) {
    c += 8.0 + (i % 3) * 0.01;
    v.push_back(std::round(c * 100) / 100);
  }
  RoundTrip(Regular(v));
  // A big byte counter that grows by a steady amount, with a reset.
  std::vector<double> b;
  double bytes = 9.1e14;
  for (int i = 0; i < 7200; ++i) {
    bytes = i == 3000 ? 0 : bytes + 1048576;
    b.push_back(bytes);
  }
  std::string chunk = RoundTrip(Regular(b));
  EXPECT_LT(chunk.size(), 200u);
}

TEST(ChunkCodecTest, NoisyRatesWithBursts) {
  // PCIe bytes/s with 3 decimals: lognormal noise plus rare bursts 50x larger,
  // the shape that bit-packed blocks with exceptions are for.
  std::mt19937_64 rng(17);
  std::lognormal_distribution<double> rate(std::log(1.5e8), 0.35);
  std::vector<double> v;
  for (int i = 0; i < 7200; ++i) {
    double x = rate(rng) + (rng() % 20 == 0 ? 5e9 : 0);
    v.push_back(std::round(x * 1000) / 1000);
  }
  std::string chunk = RoundTrip(Regular(v));
  // ~38 bits of entropy per sample; varints of deltas would need ~6 bytes.
  EXPECT_LT(chunk.size(), 7200u * 5.3);
}

TEST(ChunkCodecTest, CommonFactorsAreDividedOut) {
  // Memory in kB * 1024 and disk counters in 4 KiB pages.
  std::mt19937_64 rng(19);
  std::vector<double> mem, disk;
  int64_t kb = 441000000, pages = 1000000;
  for (int i = 0; i < 7200; ++i) {
    kb += static_cast<int64_t>(rng() % 40001) - 20000;
    pages += static_cast<int64_t>(rng() % 80);
    mem.push_back(static_cast<double>(kb * 1024));
    disk.push_back(static_cast<double>(pages * 4096));
  }
  std::string mem_chunk = RoundTrip(Regular(mem));
  std::string disk_chunk = RoundTrip(Regular(disk));
  // Without the factor each delta would carry 10 (12) extra zero bits.
  EXPECT_LT(mem_chunk.size(), 7200u * 2.4);
  EXPECT_LT(disk_chunk.size(), 7200u * 1.0);
}

TEST(ChunkCodecTest, GaugeAroundALevel) {
  // Noise around a fixed level: offset coding beats delta coding here.
  std::mt19937_64 rng(23);
  std::vector<double> v;
  for (int i = 0; i < 7200; ++i) v.push_back(static_cast<double>(1000000 + rng() % 65536));
  std::string chunk = RoundTrip(Regular(v));
  EXPECT_LT(chunk.size(), 7200u * 2.1);
}

TEST(ChunkCodecTest, WideIntegersUseEveryBitWidth) {
  // Values whose scaled residuals need all 64 bits after zigzag, and every
  // width in between, exercise the packer's width and exception fields.
  std::mt19937_64 rng(29);
  std::vector<double> v;
  for (int i = 0; i < 4096; ++i) {
    int bits = i % 54;
    double mag = static_cast<double>(rng() & ((uint64_t{1} << bits) - 1));
    v.push_back(i % 2 ? mag : -mag);
  }
  v.push_back(9007199254740992.0);
  v.push_back(-9007199254740992.0);
  RoundTrip(Regular(v));
}

TEST(ChunkCodecTest, EveryWidthAndLengthAroundBlockEnds) {
  // The decoder unpacks a block without per-value bounds checks only when the
  // whole block has 8 readable bytes past each value; the last blocks of a
  // chunk fall back to checked reads. Lengths around block multiples and every
  // value width cross that switch at every position.
  std::mt19937_64 rng(31);
  for (int bits : {1, 3, 7, 8, 13, 31, 32, 33, 47, 52}) {
    for (size_t n : {2u, 3u, 31u, 32u, 33u, 34u, 63u, 64u, 65u, 97u}) {
      std::vector<double> v;
      for (size_t i = 0; i < n; ++i) {
        v.push_back(static_cast<double>(rng() & ((uint64_t{1} << bits) - 1)) / 100);
      }
      RoundTrip(Regular(v));
      // Irregular times too: wide delta-of-deltas take the multi-byte varint path.
      std::vector<Sample> irregular = Regular(v);
      int64_t t = 1700000000000;
      for (auto& smp : irregular) smp.t_ms = t += 1 + static_cast<int64_t>(rng() % 100000);
      RoundTrip(irregular);
    }
  }
}

TEST(ChunkCodecTest, AStrayValueDoesNotRaiseTheExponent) {
  std::mt19937_64 rng(41);
  std::vector<double> v;
  for (int i = 0; i < 7200; ++i) v.push_back(static_cast<double>(6000 + rng() % 100) / 100);
  std::string plain = RoundTrip(Regular(v));
  v[100] = 1.5e-9;
  v[200] = 0.123456;
  std::string stray = RoundTrip(Regular(v));
  EXPECT_LT(stray.size(), plain.size() + 64);
}

TEST(ChunkCodecTest, LargeAndSmallMagnitudes) {
  RoundTrip(Regular({1e300, -1e300, 1e-300, 5e-324, std::numeric_limits<double>::max(),
                     std::numeric_limits<double>::lowest(), std::numeric_limits<double>::min(),
                     9007199254740993.0, 9007199254740992.0, -9007199254740992.0, 1e15, 1.5e17,
                     123456789012.345, 0.000001, 0.1234567}));
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back(1e-9 * i);
  RoundTrip(Regular(v));
  v.clear();
  for (int i = 0; i < 1000; ++i) v.push_back(4.0e15 + 0.5 * i);
  RoundTrip(Regular(v));
}

TEST(ChunkCodecTest, NegativeValuesAndNegativeZero) {
  RoundTrip(Regular({-1.5, -0.001, -0.0, 0.0, -0.0, -123.456, 7, -7, -0.0}));
}

TEST(ChunkCodecTest, NanAndInfinity) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  // Prometheus' staleness marker is a NaN with a specific payload.
  const double stale = std::bit_cast<double>(uint64_t{0x7ff0000000000002});
  std::vector<double> v;
  for (int i = 0; i < 1000; ++i) v.push_back(i % 97 == 0 ? nan : i % 101 == 0 ? inf : 0.25 * i);
  v.push_back(-inf);
  v.push_back(stale);
  RoundTrip(Regular(v));
  RoundTrip(Regular({nan, nan, inf, -inf, nan}));
}

// Staleness markers must keep their exact bits through every value path
// (decimal exceptions, Gorilla XOR) and stay apart from ordinary NaNs, or the
// query engine would read a vanished series as a NaN value, or an ordinary
// NaN as a vanished series.
TEST(ChunkCodecTest, StalenessMarkersKeepTheirBits) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> noise(0, 1);
  std::vector<std::vector<double>> shapes;
  std::vector<double> decimal, floats, mixed;
  for (int i = 0; i < 500; ++i) {
    decimal.push_back(i % 50 == 49 ? StaleNaN() : 0.25 * i);   // exceptions in decimal mode
    floats.push_back(i % 50 == 49 ? StaleNaN() : noise(rng));  // XOR mode
    mixed.push_back(i % 3 == 0 ? StaleNaN() : i % 3 == 1 ? nan : 98.5);
  }
  shapes = {decimal, floats, mixed, {StaleNaN()}, {StaleNaN(), StaleNaN()}, {1, StaleNaN(), 2}};
  for (const auto& values : shapes) {
    std::vector<Sample> in = Regular(values);
    std::vector<Sample> got;
    ASSERT_TRUE(DecodeChunk(EncodeChunk(in), &got).ok());
    ASSERT_EQ(got.size(), in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      ASSERT_EQ(std::bit_cast<uint64_t>(got[i].value), std::bit_cast<uint64_t>(in[i].value))
          << "sample " << i << " of " << in.size();
      ASSERT_EQ(IsStaleNaN(got[i].value), IsStaleNaN(in[i].value)) << "sample " << i;
    }
  }
  EXPECT_FALSE(IsStaleNaN(nan));
  EXPECT_FALSE(IsStaleNaN(std::nan("")));
}

TEST(ChunkCodecTest, InexactDecimalsStayExact) {
  // 0.1 + 0.2 is not 0.3: it must come back as 0.30000000000000004.
  std::vector<double> v;
  double acc = 0;
  for (int i = 0; i < 500; ++i) {
    acc += 0.1;
    v.push_back(acc);
  }
  v.push_back(0.1 + 0.2);
  v.push_back(1.0 / 3.0);
  RoundTrip(Regular(v));
}

TEST(ChunkCodecTest, RandomFloats) {
  std::mt19937_64 rng(3);
  std::vector<double> v;
  for (int i = 0; i < 7200; ++i) v.push_back(std::bit_cast<double>(rng()));
  RoundTrip(Regular(v));
  std::uniform_real_distribution<double> u(-1000, 1000);
  v.clear();
  for (int i = 0; i < 7200; ++i) v.push_back(u(rng));
  RoundTrip(Regular(v));
}

TEST(ChunkCodecTest, IrregularTimestamps) {
  std::mt19937_64 rng(5);
  std::vector<Sample> s;
  int64_t t = 1700000000000;
  for (int i = 0; i < 5000; ++i) {
    t += 1 + static_cast<int64_t>(rng() % 3000);
    if (i % 500 == 0) t += 3600000;  // gaps
    s.push_back({t, static_cast<double>(i % 17)});
  }
  RoundTrip(s);
}

TEST(ChunkCodecTest, ExtremeTimestamps) {
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  RoundTrip({{lo, 1}, {-1, 2}, {0, 3}, {hi - 1, 4}, {hi, 5}});
  RoundTrip({{-100000, 1}, {-99000, 2}, {-98000, 3}});
}

TEST(ChunkCodecTest, ScrapeJitter) {
  std::mt19937_64 rng(9);
  std::vector<Sample> s;
  for (int i = 0; i < 7200; ++i) {
    int64_t jitter = static_cast<int64_t>(rng() % 21) - 10;
    s.push_back({1700000000000 + i * 1000LL + jitter, 60.0 + (i % 40)});
  }
  RoundTrip(s);
}

TEST(ChunkCodecTest, AppendsToExistingOutput) {
  std::vector<Sample> a = Regular({1, 2, 3});
  std::vector<Sample> b = Regular({4.5, 5.5}, 1700000010000);
  std::vector<Sample> got;
  ASSERT_TRUE(DecodeChunk(EncodeChunk(a), &got).ok());
  ASSERT_TRUE(DecodeChunk(EncodeChunk(b), &got).ok());
  std::vector<Sample> want = a;
  want.insert(want.end(), b.begin(), b.end());
  ExpectSameSamples(want, got);
}

TEST(ChunkCodecTest, FormatVersionIsTheFirstByte) {
  std::string chunk = EncodeChunk(Regular({1, 2, 3}));
  EXPECT_EQ(chunk[0], 1);
  chunk[0] = 2;
  std::vector<Sample> got;
  Status s = DecodeChunk(chunk, &got);
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("version 2"), std::string::npos) << s.message();
}

// A set of chunks that covers every path of the format: empty, raw and zstd
// bodies, decimal (delta and delta-of-delta, with exceptions) and float values.
std::vector<std::string> VariedChunks() {
  std::vector<std::string> chunks;
  chunks.push_back(EncodeChunk({}));
  chunks.push_back(EncodeChunk(Regular({3.25})));
  chunks.push_back(EncodeChunk(Regular({1.5, 2.5, 3.75, -1})));
  std::vector<double> gauge, counter, floats;
  for (int i = 0; i < 300; ++i) {
    gauge.push_back(i % 7 == 0 ? std::nan("") : (i * 37 % 101) / 10.0);
    counter.push_back(1000.0 + i * 3.5);
    floats.push_back(std::sqrt(static_cast<double>(i) + 0.5));
  }
  chunks.push_back(EncodeChunk(Regular(gauge)));
  chunks.push_back(EncodeChunk(Regular(counter)));
  chunks.push_back(EncodeChunk(Regular(floats)));
  chunks.push_back(EncodeChunk(Regular({0.1, 0.7, 1.0 / 3, 2.0 / 3, 0.2})));
  std::mt19937_64 rng(31);
  std::vector<double> noisy, level;
  for (int i = 0; i < 200; ++i) {
    noisy.push_back(static_cast<double>(rng() % 100000000000) / 1000 + (i % 37 == 0 ? 1e9 : 0));
    level.push_back(static_cast<double>(4096 * (1000 + rng() % 50)));
  }
  chunks.push_back(EncodeChunk(Regular(noisy)));
  chunks.push_back(EncodeChunk(Regular(level)));
  return chunks;
}

TEST(ChunkCodecTest, EveryTruncationIsAnError) {
  for (const std::string& chunk : VariedChunks()) {
    for (size_t len = 0; len < chunk.size(); ++len) {
      std::vector<Sample> got;
      Status s = DecodeChunk(std::string_view(chunk).substr(0, len), &got);
      EXPECT_FALSE(s.ok()) << "length " << len << " of " << chunk.size();
      EXPECT_TRUE(got.empty());
    }
  }
}

TEST(ChunkCodecTest, EveryBitFlipIsAnError) {
  for (const std::string& chunk : VariedChunks()) {
    for (size_t bit = 0; bit < chunk.size() * 8; ++bit) {
      std::string bad = chunk;
      bad[bit / 8] = static_cast<char>(bad[bit / 8] ^ (1 << (bit % 8)));
      std::vector<Sample> got;
      EXPECT_FALSE(DecodeChunk(bad, &got).ok()) << "bit " << bit << " of " << chunk.size() * 8;
      EXPECT_TRUE(got.empty());
    }
  }
}

TEST(ChunkCodecTest, TrailingBytesAreAnError) {
  std::string chunk = EncodeChunk(Regular({1, 2, 3}));
  std::vector<Sample> got;
  EXPECT_FALSE(DecodeChunk(chunk + "x", &got).ok());
}

// Builds a chunk by hand with a valid checksum, so the decoder's structural
// checks (not the CRC) must reject it.
std::string WithCrc(std::string body) {
  PutFixed32(&body, Crc32c(body));
  return body;
}

TEST(ChunkCodecTest, HostileSampleCountsAreRejectedWithoutAllocating) {
  std::vector<Sample> got;
  for (uint64_t n : {uint64_t{1} << 62, uint64_t{1} << 40, uint64_t{1} << 23, uint64_t{100000}}) {
    std::string c(1, '\x01');
    PutVarint64(&c, n);
    c.push_back('\x00');  // raw body
    c.append("\x02\x02\x00\x00\x00", 5);
    Status s = DecodeChunk(WithCrc(c), &got);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << n;
    EXPECT_TRUE(got.empty());
    EXPECT_LT(got.capacity(), 1000u) << n;
  }
  // A zstd body that claims to be enormous.
  std::string c(1, '\x01');
  PutVarint64(&c, 10);
  c.push_back('\x01');
  PutVarint64(&c, uint64_t{1} << 40);
  c.append("garbage");
  EXPECT_EQ(DecodeChunk(WithCrc(c), &got).code(), StatusCode::kCorruption);
}

// Re-wraps a chunk's body, uncompressed, under a fresh header and checksum,
// so that mutations reach the body decoders instead of failing the CRC.
std::string RawChunk(uint64_t n, std::string_view body) {
  std::string c(1, '\x01');
  PutVarint64(&c, n);
  c.push_back('\x00');
  c.append(body);
  return WithCrc(c);
}

// The body of a chunk made by EncodeChunk, and its sample count.
std::string BodyOf(const std::string& chunk, uint64_t* n) {
  std::string_view in(chunk);
  in.remove_prefix(1);
  in.remove_suffix(4);
  EXPECT_TRUE(GetVarint64(&in, n));
  char codec = in[0];
  in.remove_prefix(1);
  if (codec == 0) return std::string(in);
  uint64_t raw_len = 0;
  EXPECT_TRUE(GetVarint64(&in, &raw_len));
  std::string body(raw_len, '\0');
  EXPECT_EQ(ZSTD_decompress(body.data(), body.size(), in.data(), in.size()), raw_len);
  return body;
}

TEST(ChunkCodecTest, MutatedBodiesWithValidChecksumNeverCrash) {
  std::mt19937_64 rng(37);
  for (const std::string& chunk : VariedChunks()) {
    uint64_t n = 0;
    std::string body = BodyOf(chunk, &n);
    std::vector<Sample> want, got;
    ASSERT_TRUE(DecodeChunk(RawChunk(n, body), &want).ok());
    for (size_t pos = 0; pos < body.size(); ++pos) {
      for (int k = 0; k < 4; ++k) {
        std::string bad = body;
        bad[pos] = static_cast<char>(k == 0 ? bad[pos] ^ 0x80 : rng());
        got.clear();
        Status s = DecodeChunk(RawChunk(n, bad), &got);
        if (s.ok()) {
          EXPECT_EQ(got.size(), n);
        } else {
          EXPECT_TRUE(got.empty());
        }
      }
      // Truncated bodies and wrong sample counts.
      got.clear();
      EXPECT_FALSE(DecodeChunk(RawChunk(n, std::string_view(body).substr(0, pos)), &got).ok());
    }
    got.clear();
    (void)DecodeChunk(RawChunk(n + 1, body), &got);
    if (n > 0) {
      EXPECT_FALSE(DecodeChunk(RawChunk(n - 1, body), &got).ok());
    }
  }
}

TEST(ChunkCodecTest, RandomGarbageNeverCrashes) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    std::string c(1, '\x01');
    size_t len = rng() % 64;
    for (size_t k = 0; k < len; ++k) c.push_back(static_cast<char>(rng()));
    std::vector<Sample> got;
    (void)DecodeChunk(WithCrc(c), &got);
  }
}

TEST(ChunkCodecTest, RandomSeriesRoundTrip) {
  std::mt19937_64 rng(13);
  for (int iter = 0; iter < 200; ++iter) {
    size_t n = rng() % 400;
    int digits = static_cast<int>(rng() % 8);
    std::vector<Sample> s;
    int64_t t = static_cast<int64_t>(rng() % 2000000000000);
    for (size_t i = 0; i < n; ++i) {
      t += 1 + static_cast<int64_t>(rng() % (iter % 2 ? 1000 : 5));
      double v;
      switch (rng() % 10) {
        case 0:
          v = std::bit_cast<double>(rng());
          break;
        case 1:
          v = std::numeric_limits<double>::infinity();
          break;
        default:
          v = static_cast<double>(static_cast<int64_t>(rng() % 2000000) - 1000000) /
              std::pow(10.0, digits);
      }
      s.push_back({t, v});
    }
    RoundTrip(s);
  }
}

}  // namespace
}  // namespace vigil::tsdb

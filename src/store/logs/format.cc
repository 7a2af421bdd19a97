#include "store/logs/format.h"

#include <zstd.h>

#include <algorithm>
#include <cstdio>

#include "core/coding.h"

namespace vigil::logstore {
namespace {

constexpr uint8_t kBlockVersion = 1;
constexpr uint64_t kMaxBlockRawBytes = 256u << 20;
// Level 1: on training logs it is both the fastest and, surprisingly, denser
// than 3 (bench/RESULTS.md "Logs": 6.8x vs 6.2x on 4,000-line blocks);
// compression was the largest single cost of ingest at level 3.
constexpr int kZstdLevel = 1;
constexpr uint32_t kFilterBitsPerKey = 8;
constexpr uint8_t kFilterHashes = 3;

uint64_t Mix64(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline uint8_t Fold(uint8_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }
inline bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }
inline bool IsDigitsTrigram(uint32_t t) {
  return IsDigit(t >> 16) && IsDigit((t >> 8) & 0xff) && IsDigit(t & 0xff);
}

// Trigrams of three digits are not in filters: in logs full of numbers
// (losses, steps, timestamps) every block holds nearly all thousand of them,
// so they never rule a block out and only make filters bigger (25% on
// training logs). They are dropped when the filter is built, not in Add(),
// where a branch per digit cost more than the probe it saved. Patterns leave
// them out too (a filter must never be asked for a key it never stores).

// Bit positions of one trigram in an m-bit filter (double hashing, and a
// multiply-shift range reduction so m need not be a power of two).
template <typename Fn>
void ForEachBit(uint32_t trigram, uint32_t m, Fn fn) {
  uint64_t h = Mix64(trigram);
  uint32_t h1 = static_cast<uint32_t>(h);
  uint32_t h2 = static_cast<uint32_t>(h >> 32) | 1;
  for (uint8_t i = 0; i < kFilterHashes; ++i) {
    uint32_t x = h1 + i * h2;
    fn(static_cast<uint32_t>((static_cast<uint64_t>(x) * m) >> 32));
  }
}

bool CivilFromDays(int64_t z, int* y, unsigned* m, unsigned* d) {
  // Howard Hinnant's algorithm.
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t yy = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int>(yy + (*m <= 2));
  return true;
}

int64_t DaysFromCivil(int y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

const char* LevelName(int level) {
  static const char* const kNames[wire::kLogLevelCount] = {"unknown", "trace", "debug", "info",
                                                           "warn",    "error", "fatal"};
  return level >= 0 && level < wire::kLogLevelCount ? kNames[level] : "unknown";
}

int64_t DayOf(int64_t time_ns) { return time_ns <= 0 ? 0 : time_ns / kDayNs; }

std::string PartitionFileName(int64_t day) {
  int y;
  unsigned m, d;
  CivilFromDays(day, &y, &m, &d);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u.db", y, m, d);
  return buf;
}

int64_t ParsePartitionFileName(std::string_view name) {
  if (name.size() != 13 || name.substr(10) != ".db" || name[4] != '-' || name[7] != '-') return -1;
  int v[3] = {0, 0, 0};
  const size_t starts[3] = {0, 5, 8}, lens[3] = {4, 2, 2};
  for (int i = 0; i < 3; ++i) {
    for (size_t j = 0; j < lens[i]; ++j) {
      char c = name[starts[i] + j];
      if (c < '0' || c > '9') return -1;
      v[i] = v[i] * 10 + (c - '0');
    }
  }
  if (v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31) return -1;
  int64_t day = DaysFromCivil(v[0], static_cast<unsigned>(v[1]), static_cast<unsigned>(v[2]));
  return PartitionFileName(day) == name ? day : -1;
}

// ---- WAL records ---------------------------------------------------------

void EncodeStreamRecord(std::string* dst, uint64_t id, const wire::Labels& labels) {
  dst->push_back(static_cast<char>(WalRecordType::kStream));
  PutVarint64(dst, id);
  wire::PutLabels(dst, labels);
}

void EncodeLinesHeader(std::string* dst, const WalLinesRecord& r, uint64_t line_count) {
  dst->push_back(static_cast<char>(WalRecordType::kLines));
  PutVarint64(dst, r.stream_id);
  PutLengthPrefixed(dst, r.node);
  PutLengthPrefixed(dst, r.source_id);
  PutVarint64(dst, r.end_offset);
  PutVarint64(dst, r.counters.sampled_lines);
  PutVarint64(dst, r.counters.filtered_lines);
  PutVarint64(dst, r.counters.truncated_lines);
  PutVarint64(dst, r.duplicates);
  PutVarint64(dst, line_count);
  if (line_count > 0) {
    PutVarint64(dst, r.first_line_no);
    PutVarint64(dst, r.first_seq);
  }
}

void AddWalLine(std::string* dst, int64_t time_ns, uint8_t level, uint8_t flags,
                std::string_view text) {
  PutVarsint64(dst, time_ns);
  dst->push_back(static_cast<char>((level & 0x0f) | (flags << 4)));
  PutLengthPrefixed(dst, text);
}

Status DecodeWalRecord(std::string_view body, WalRecord* out) {
  if (body.empty()) return Corruption("empty log WAL record");
  auto type = static_cast<uint8_t>(body.front());
  body.remove_prefix(1);
  bool ok = false;
  if (type == static_cast<uint8_t>(WalRecordType::kStream)) {
    out->type = WalRecordType::kStream;
    ok = GetVarint64(&body, &out->stream_id) &&
         wire::GetLabels(&body, &out->labels, kMaxStreamLabels);
  } else if (type == static_cast<uint8_t>(WalRecordType::kLines)) {
    out->type = WalRecordType::kLines;
    WalLinesRecord& r = out->lines;
    uint64_t n = 0;
    ok = GetVarint64(&body, &r.stream_id) && GetLengthPrefixed(&body, &r.node) &&
         GetLengthPrefixed(&body, &r.source_id) && GetVarint64(&body, &r.end_offset) &&
         GetVarint64(&body, &r.counters.sampled_lines) &&
         GetVarint64(&body, &r.counters.filtered_lines) &&
         GetVarint64(&body, &r.counters.truncated_lines) && GetVarint64(&body, &r.duplicates) &&
         GetVarint64(&body, &n) && n <= body.size() / 3;  // a line takes >= 3 bytes
    if (ok && n > 0) ok = GetVarint64(&body, &r.first_line_no) && GetVarint64(&body, &r.first_seq);
    r.lines.clear();
    if (ok) r.lines.reserve(n);
    for (uint64_t i = 0; ok && i < n; ++i) {
      WalLine l;
      ok = GetVarsint64(&body, &l.time_ns) && !body.empty();
      if (!ok) break;
      auto meta = static_cast<uint8_t>(body.front());
      body.remove_prefix(1);
      l.level = meta & 0x0f;
      l.flags = meta >> 4;
      ok = l.level < wire::kLogLevelCount && GetLengthPrefixed(&body, &l.text);
      r.lines.push_back(l);
    }
  }
  if (!ok || !body.empty()) return Corruption("malformed log WAL record");
  return Status::Ok();
}

// ---- blocks --------------------------------------------------------------

std::string EncodeBlock(const std::vector<BlockLine>& lines, BlockHeader* h) {
  std::string raw;
  size_t text_bytes = 0;
  for (const auto& l : lines) text_bytes += l.text.size();
  raw.reserve(text_bytes + lines.size() * 8 + 16);
  PutVarint64(&raw, lines.size());
  h->level_counts.fill(0);
  h->min_time = INT64_MAX;
  h->max_time = INT64_MIN;
  h->min_seq = UINT64_MAX;
  h->max_seq = 0;
  int64_t prev_t = 0;
  for (const auto& l : lines) {
    PutVarsint64(&raw, static_cast<int64_t>(static_cast<uint64_t>(l.time_ns) -
                                            static_cast<uint64_t>(prev_t)));
    prev_t = l.time_ns;
    h->min_time = std::min(h->min_time, l.time_ns);
    h->max_time = std::max(h->max_time, l.time_ns);
    h->min_seq = std::min(h->min_seq, l.seq);
    h->max_seq = std::max(h->max_seq, l.seq);
    ++h->level_counts[std::min<int>(l.level, wire::kLogLevelCount - 1)];
  }
  for (const auto& l : lines) raw.push_back(static_cast<char>((l.level & 0x0f) | (l.flags << 4)));
  uint64_t prev_s = 0;
  for (const auto& l : lines) {
    PutVarint64(&raw, l.seq - prev_s);  // seqs grow within a stream
    prev_s = l.seq;
  }
  for (const auto& l : lines) PutVarint64(&raw, l.text.size());
  for (const auto& l : lines) raw.append(l.text);
  h->raw_bytes = text_bytes;

  std::string out;
  out.push_back(static_cast<char>(kBlockVersion));
  PutVarint64(&out, raw.size());
  size_t head = out.size();
  out.resize(head + ZSTD_compressBound(raw.size()));
  size_t n =
      ZSTD_compress(out.data() + head, out.size() - head, raw.data(), raw.size(), kZstdLevel);
  // Compression of a buffer into its bound cannot fail; keep the format total anyway.
  if (ZSTD_isError(n)) n = 0;
  out.resize(head + n);
  return out;
}

Status DecodeBlock(std::string_view data, DecodedBlock* out) {
  uint64_t raw_len;
  if (data.empty() || static_cast<uint8_t>(data.front()) != kBlockVersion) {
    return Corruption("log block: unknown version");
  }
  data.remove_prefix(1);
  if (!GetVarint64(&data, &raw_len) || raw_len > kMaxBlockRawBytes) {
    return Corruption("log block: bad size");
  }
  std::string raw(raw_len, '\0');
  size_t n = ZSTD_decompress(raw.data(), raw.size(), data.data(), data.size());
  if (ZSTD_isError(n) || n != raw_len) return Corruption("log block: bad zstd data");
  std::string_view in(raw);
  uint64_t count;
  if (!GetVarint64(&in, &count) || count > in.size() / 4) return Corruption("log block: bad count");
  out->times.resize(count);
  out->seqs.resize(count);
  out->meta.resize(count);
  out->offsets.resize(count + 1);
  int64_t t = 0;
  for (uint64_t i = 0; i < count; ++i) {
    int64_t d;
    if (!GetVarsint64(&in, &d)) return Corruption("log block: bad times");
    t = static_cast<int64_t>(static_cast<uint64_t>(t) + static_cast<uint64_t>(d));
    out->times[i] = t;
  }
  if (in.size() < count) return Corruption("log block: bad levels");
  for (uint64_t i = 0; i < count; ++i) {
    out->meta[i] = static_cast<uint8_t>(in[i]);
    if ((out->meta[i] & 0x0f) >= wire::kLogLevelCount) return Corruption("log block: bad level");
  }
  in.remove_prefix(count);
  uint64_t s = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t d;
    if (!GetVarint64(&in, &d)) return Corruption("log block: bad seqs");
    s += d;
    out->seqs[i] = s;
  }
  uint64_t off = 0;
  out->offsets[0] = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t len;
    if (!GetVarint64(&in, &len) || len > in.size()) return Corruption("log block: bad lengths");
    off += len;
    out->offsets[i + 1] = static_cast<uint32_t>(off);
  }
  if (off != in.size()) return Corruption("log block: text size mismatch");
  out->text.assign(in.data(), in.size());
  return Status::Ok();
}

// ---- token filter -------------------------------------------------------

TrigramCollector::TrigramCollector() : seen_((size_t{1} << 24) / 64, 0) {}

void TrigramCollector::Add(std::string_view text) {
  if (text.size() < 3) return;
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  uint32_t t = (uint32_t{Fold(p[0])} << 8) | Fold(p[1]);
  for (size_t i = 2; i < text.size(); ++i) {
    t = ((t << 8) | Fold(p[i])) & 0xffffff;
    uint64_t& word = seen_[t >> 6];
    uint64_t bit = uint64_t{1} << (t & 63);
    if ((word & bit) == 0) {
      word |= bit;
      distinct_.push_back(t);
    }
  }
}

std::string TrigramCollector::Build() {
  size_t keys = 0;
  for (uint32_t t : distinct_) keys += !IsDigitsTrigram(t);
  uint32_t m = std::max<uint32_t>(64, static_cast<uint32_t>(keys) * kFilterBitsPerKey);
  m = (m + 7) & ~7u;
  std::string out;
  PutFixed32(&out, m);
  out.push_back(static_cast<char>(kFilterHashes));
  size_t head = out.size();
  out.resize(head + m / 8, '\0');
  auto* bits = reinterpret_cast<uint8_t*>(out.data() + head);
  for (uint32_t t : distinct_) {
    seen_[t >> 6] = 0;
    if (IsDigitsTrigram(t)) continue;
    ForEachBit(t, m, [&](uint32_t b) { bits[b >> 3] |= static_cast<uint8_t>(1u << (b & 7)); });
  }
  distinct_.clear();
  return out;
}

std::vector<uint32_t> PatternTrigrams(std::string_view pattern) {
  std::vector<uint32_t> out;
  const auto* p = reinterpret_cast<const uint8_t*>(pattern.data());
  for (size_t i = 2; i < pattern.size(); ++i) {
    uint32_t t = (uint32_t{Fold(p[i - 2])} << 16) | (uint32_t{Fold(p[i - 1])} << 8) | Fold(p[i]);
    if (!IsDigitsTrigram(t)) out.push_back(t);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool FilterMayContain(std::string_view filter, const std::vector<uint32_t>& trigrams) {
  if (filter.size() < 5) return true;
  uint32_t m = DecodeFixed32(filter.data());
  if (static_cast<uint8_t>(filter[4]) != kFilterHashes || m == 0 || m / 8 != filter.size() - 5) {
    return true;
  }
  const auto* bits = reinterpret_cast<const uint8_t*>(filter.data() + 5);
  for (uint32_t t : trigrams) {
    bool present = true;
    ForEachBit(t, m, [&](uint32_t b) { present = present && (bits[b >> 3] >> (b & 7)) & 1; });
    if (!present) return false;
  }
  return true;
}

}  // namespace vigil::logstore

#include "store/logs/format.h"

#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>

#include "core/civil_time.h"
#include "core/coding.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vigil::logstore {
namespace {

constexpr uint32_t kFilterBitsPerKey = 8;
constexpr uint8_t kFilterHashes = 3;
// Filter formats: 1 (trigrams): m, k, bits. Later ones: m, 0x80 | k, a
// format byte, bits. Format-1 readers see an unknown k in later filters and
// never skip with them. 2: trigrams of the text, and digit-run keys of runs
// of 3 or more digits. 3 (written now): trigrams of the skeleton, and
// digit-run keys of every run, with the context's digits as '0' (the
// skeleton's trigrams no longer tell "rank 3" from "rank 7"; the keys do).
constexpr uint8_t kFilterHasFormat = 0x80;
constexpr uint8_t kFilterFormatDigitRuns = 2;
constexpr uint8_t kFilterFormatSkeletons = 3;
// Digit-run keys: runs of digits after two bytes of context give one key per
// prefix length k in [1, kMaxRunDigits] (format 2: [3, kMaxRunDigits]);
// a (context, k) group with more than kDigitGroupMax distinct prefixes in a
// block is stored as its saturated key alone (groups of k = 1 hold ten at
// most: never). Changing any of these changes what format 3 means: use a
// new format number.
constexpr unsigned kMinRunDigitsFormat2 = 3;
constexpr unsigned kMaxRunDigits = 8;
constexpr unsigned kDigitGroupMax = 16;
// Bound on the distinct digit keys a collector tracks per block (4 MiB of
// table); past it, new keys mark their group saturated, which is always safe.
constexpr size_t kMaxDigitKeys = size_t{1} << 18;
constexpr uint32_t kSaturatedDigits = 0xffffffff;
constexpr uint16_t kContextTouched = 0x100;  // in TrigramCollector::full_
// The distinct-trigram set starts at 2^12 slots, and goes back to that after
// a block that grew it past 2^16.
constexpr int kMinTrigramShift = 32 - 12;
constexpr size_t kMinTrigramSlots = size_t{1} << 12;
constexpr size_t kMaxKeptTrigramSlots = size_t{1} << 16;

uint64_t Mix64(uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline uint8_t Fold(uint8_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }
inline bool IsDigit(uint8_t c) { return c >= '0' && c <= '9'; }
// A byte of a folded skeleton (format 3 trigrams and digit-run contexts).
inline uint8_t FoldSkeleton(uint8_t c) { return IsDigit(c) ? '0' : Fold(c); }
inline bool IsDigitsTrigram(uint32_t t) {
  return IsDigit(t >> 16) && IsDigit((t >> 8) & 0xff) && IsDigit(t & 0xff);
}

// Trigrams of three digits are not in filters: in logs full of numbers
// (losses, steps, timestamps) every block holds nearly all thousand of them,
// so they never rule a block out and only make filters bigger (25% on
// training logs). They are dropped when the filter is built, not in Add(),
// where a branch per digit cost more than the probe it saved. Patterns leave
// them out too (a filter must never be asked for a key it never stores).

// A digit-run key: bits 40..55 the two folded context bytes, 32..35 the
// prefix length k, 0..31 the k digits as nibbles (first digit highest), or
// kSaturatedDigits for the group's saturated key. Never below 2^33, so never
// equal to a trigram.
inline uint64_t DigitKey(uint32_t ctx, uint32_t k, uint32_t digits) {
  return uint64_t{ctx} << 40 | uint64_t{k} << 32 | digits;
}
inline uint64_t SaturatedKey(uint64_t key) {
  return (key & ~uint64_t{0xffffffff}) | kSaturatedDigits;
}

#if defined(__SSE2__)
// Folds the 16 bytes at p into out; returns their digit mask.
inline uint32_t Fold16(const uint8_t* p, uint8_t* out) {
  const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i up = _mm_sub_epi8(x, _mm_set1_epi8('A'));
  const __m128i is_up = _mm_cmpeq_epi8(_mm_min_epu8(up, _mm_set1_epi8(25)), up);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out),
                   _mm_add_epi8(x, _mm_and_si128(is_up, _mm_set1_epi8(32))));
  const __m128i d = _mm_sub_epi8(x, _mm_set1_epi8('0'));
  const __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d);
  return static_cast<uint16_t>(_mm_movemask_epi8(digit));
}
#endif

// Folds p[0, n) (n <= 64) into out and returns the digit mask of those
// bytes (bit i: p[i] is an ASCII digit). back: the 16 bytes before p + n are
// readable (the text holds them).
inline uint64_t FoldChunk(const uint8_t* p, size_t n, bool back, uint8_t* out) {
  uint64_t m = 0;
  size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 <= n; i += 16) m |= uint64_t{Fold16(p + i, out + i)} << i;
  if (i < n && back) {
    // The last 1..15 bytes: fold the 16 that end the text, keep the tail.
    alignas(16) uint8_t tail[16];
    const size_t rest = n - i;
    const uint32_t d = Fold16(p + n - 16, tail);
    std::memcpy(out + i, tail + 16 - rest, rest);
    return m | uint64_t{d >> (16 - rest)} << i;
  }
#else
  (void)back;
#endif
  for (; i < n; ++i) {
    out[i] = Fold(p[i]);
    m |= uint64_t{IsDigit(p[i])} << i;
  }
  return m;
}

// Bit positions of one key in an m-bit filter (double hashing, and a
// multiply-shift range reduction so m need not be a power of two).
template <typename Fn>
void ForEachBit(uint64_t key, uint32_t m, Fn fn) {
  uint64_t h = Mix64(key);
  uint32_t h1 = static_cast<uint32_t>(h);
  uint32_t h2 = static_cast<uint32_t>(h >> 32) | 1;
  for (uint8_t i = 0; i < kFilterHashes; ++i) {
    uint32_t x = h1 + i * h2;
    fn(static_cast<uint32_t>((static_cast<uint64_t>(x) * m) >> 32));
  }
}

}  // namespace

const char* LevelName(int level) {
  static const char* const kNames[wire::kLogLevelCount] = {"unknown", "trace", "debug", "info",
                                                           "warn",    "error", "fatal"};
  return level >= 0 && level < wire::kLogLevelCount ? kNames[level] : "unknown";
}

int64_t DayOf(int64_t time_ns) { return time_ns <= 0 ? 0 : time_ns / kDayNs; }

std::string PartitionFileName(int64_t day) {
  CivilDate c = CivilFromDays(day);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u.db", static_cast<int>(c.year), c.month, c.day);
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
  const bool lost = r.counters.lost_bytes != 0;
  dst->push_back(static_cast<char>(lost ? WalRecordType::kLinesWithLost : WalRecordType::kLines));
  PutVarint64(dst, r.stream_id);
  PutLengthPrefixed(dst, r.node);
  PutLengthPrefixed(dst, r.source_id);
  PutVarint64(dst, r.end_offset);
  PutVarint64(dst, r.counters.sampled_lines);
  PutVarint64(dst, r.counters.filtered_lines);
  PutVarint64(dst, r.counters.truncated_lines);
  if (lost) PutVarint64(dst, r.counters.lost_bytes);
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
  } else if (type == static_cast<uint8_t>(WalRecordType::kLines) ||
             type == static_cast<uint8_t>(WalRecordType::kLinesWithLost)) {
    out->type = WalRecordType::kLines;
    WalLinesRecord& r = out->lines;
    r.counters = {};
    const bool lost = type == static_cast<uint8_t>(WalRecordType::kLinesWithLost);
    uint64_t n = 0;
    ok = GetVarint64(&body, &r.stream_id) && GetLengthPrefixed(&body, &r.node) &&
         GetLengthPrefixed(&body, &r.source_id) && GetVarint64(&body, &r.end_offset) &&
         GetVarint64(&body, &r.counters.sampled_lines) &&
         GetVarint64(&body, &r.counters.filtered_lines) &&
         GetVarint64(&body, &r.counters.truncated_lines) &&
         (!lost || GetVarint64(&body, &r.counters.lost_bytes)) &&
         GetVarint64(&body, &r.duplicates) && GetVarint64(&body, &n) &&
         n <= body.size() / 3;  // a line takes >= 3 bytes
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

// ---- token filter -------------------------------------------------------

TrigramCollector::TrigramCollector()
    : trigram_slots_(kMinTrigramSlots, 0),
      trigram_shift_(kMinTrigramShift),
      full_(size_t{1} << 16, 0),
      first_digits_(size_t{1} << 16, 0),
      group_(size_t{8} << 16, 0),
      last_(size_t{1} << 16, 0),
      table_(size_t{1} << 12, 0),
      table_shift_(64 - 12) {}

void TrigramCollector::Add(std::string_view text) {
  scratch_skeleton_.clear();
  scratch_digits_.clear();
  SplitDigits(text, &scratch_skeleton_, &scratch_digits_);
  Add(text, scratch_skeleton_);
}

void TrigramCollector::Add(std::string_view text, std::string_view skeleton) {
  if (text.size() < 3) return;  // no trigram, and no run with two bytes before it
  // Replayed runs index the text by the skeleton's positions: never trust a
  // skeleton that cannot be this text's.
  if (skeleton.size() != text.size()) return Add(text);
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  bool is_new;
  const int64_t index = SkeletonIndex(skeleton, &is_new);
  if (!is_new) {
    // The same skeleton has its digits at the same places, after the same
    // context bytes: only the digits are new.
    const SkeletonEntry& e = skeletons_[index];
    for (uint32_t i = e.first_run; i < e.first_run + e.run_count; ++i) {
      AddDigitRun(p + runs_[i].offset, runs_[i]);
    }
    return;
  }
  AddTrigrams(skeleton);
  std::vector<DigitRun>& runs = index >= 0 ? runs_ : scratch_runs_;
  if (index < 0) runs.clear();
  const size_t first = runs.size();
  FindDigitRuns(text, &runs);
  if (index >= 0) {
    skeletons_[index].first_run = static_cast<uint32_t>(first);
    skeletons_[index].run_count = static_cast<uint32_t>(runs.size() - first);
  }
  for (size_t i = first; i < runs.size(); ++i) AddDigitRun(p + runs[i].offset, runs[i]);
}

// Lines of one program repeat a few templates with other numbers: a block
// of training logs holds ~400 distinct skeletons in 4,000 lines, so a hash
// and a compare per line saves the trigram pass and the search for digit
// runs for the other nine tenths.
int64_t TrigramCollector::SkeletonIndex(std::string_view skeleton, bool* is_new) {
  const auto* p = reinterpret_cast<const uint8_t*>(skeleton.data());
  const size_t n = skeleton.size();
  // Two independent lanes of 8 bytes: half the multiply latency per byte.
  uint64_t h = n * 0x9e3779b97f4a7c15ull, g = ~h;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    uint64_t w[2];
    std::memcpy(w, p + i, 16);
    h = (h ^ w[0]) * 0xbf58476d1ce4e5b9ull;
    g = (g ^ w[1]) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    g ^= g >> 29;
  }
  uint64_t tail[2] = {0, 0};
  std::memcpy(tail, p + i, n - i);
  h = Mix64(h ^ tail[0]) ^ Mix64(g ^ tail[1]);

  if ((skeletons_.size() + 1) * 2 > skeleton_slots_.size()) {
    skeleton_slots_.assign(std::max<size_t>(1024, skeleton_slots_.size() * 2), 0);
    const size_t mask = skeleton_slots_.size() - 1;
    for (size_t e = 0; e < skeletons_.size(); ++e) {
      size_t slot = skeletons_[e].hash & mask;
      while (skeleton_slots_[slot] != 0) slot = (slot + 1) & mask;
      skeleton_slots_[slot] = static_cast<uint32_t>(e + 1);
    }
  }
  const size_t mask = skeleton_slots_.size() - 1;
  size_t slot = h & mask;
  for (; skeleton_slots_[slot] != 0; slot = (slot + 1) & mask) {
    const SkeletonEntry& e = skeletons_[skeleton_slots_[slot] - 1];
    if (e.hash == h && e.size == n && std::memcmp(skeleton_bytes_.data() + e.offset, p, n) == 0) {
      *is_new = false;
      return skeleton_slots_[slot] - 1;
    }
  }
  *is_new = true;
  // A block's text is at most 64 MiB (docs/logstore.md "Blocks"), so
  // offsets fit 32 bits; a collector fed more than that between Builds (a
  // tool) just stops deduplicating, which costs time, never a key.
  if (skeleton_bytes_.size() + n > UINT32_MAX) return -1;
  skeleton_slots_[slot] = static_cast<uint32_t>(skeletons_.size() + 1);
  skeletons_.push_back(
      {h, static_cast<uint32_t>(skeleton_bytes_.size()), static_cast<uint32_t>(n), 0, 0});
  skeleton_bytes_.append(skeleton);
  return static_cast<int64_t>(skeletons_.size() - 1);
}

void TrigramCollector::AddTrigrams(std::string_view skeleton) {
  const size_t n = skeleton.size();
  const auto* p = reinterpret_cast<const uint8_t*>(skeleton.data());
  // 64 bytes at a time: fold them with SIMD, then roll the trigrams over the
  // folded copy.
  alignas(16) uint8_t folded[64];
  uint32_t t = (uint32_t{Fold(p[0])} << 8) | Fold(p[1]);
  for (size_t base = 0; base < n; base += 64) {
    const size_t len = std::min<size_t>(64, n - base);
    FoldChunk(p + base, len, base + len >= 16, folded);
    for (size_t i = base == 0 ? 2 : 0; i < len; ++i) {
      t = ((t << 8) | folded[i]) & 0xffffff;
      AddTrigram(t);
    }
  }
}

// The block's distinct trigrams: an open-addressing set of t + 1 (0: empty),
// at most half full, sized to the block (a few thousand trigrams: it stays
// in cache, where a bitmap of all 2^24 took 2 MiB of memory and a cache miss
// per probe).
inline void TrigramCollector::AddTrigram(uint32_t t) {
  if ((distinct_.size() + 1) * 2 > trigram_slots_.size()) {
    trigram_slots_.assign(trigram_slots_.size() * 2, 0);
    --trigram_shift_;
    for (uint32_t d : distinct_) {
      size_t h = (d * 0x9e3779b1u) >> trigram_shift_;
      while (trigram_slots_[h] != 0) h = (h + 1) & (trigram_slots_.size() - 1);
      trigram_slots_[h] = d + 1;
    }
  }
  const size_t mask = trigram_slots_.size() - 1;
  for (size_t h = (t * 0x9e3779b1u) >> trigram_shift_;; h = (h + 1) & mask) {
    if (trigram_slots_[h] == t + 1) return;
    if (trigram_slots_[h] == 0) {
      trigram_slots_[h] = t + 1;
      distinct_.push_back(t);
      return;
    }
  }
}

void TrigramCollector::FindDigitRuns(std::string_view text, std::vector<DigitRun>* runs) {
  const size_t n = text.size();
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  // Runs are found from a per-64-byte digit bitmask, so the bytes between
  // them cost no branch (one per byte would mispredict at every run edge); a
  // window's runs are handled once the next window's mask is known, as a run
  // may cross into it.
  alignas(16) uint8_t folded[64];  // unused: FoldChunk's mask is what counts
  uint64_t prev = 0, carry = 0;    // digit mask of the previous window; its byte before
  for (size_t base = 0; base < n; base += 64) {
    const size_t len = std::min<size_t>(64, n - base);
    const uint64_t cur = FoldChunk(p + base, len, base + len >= 16, folded);
    if (base > 0) carry = FindDigitRuns(p, base - 64, prev, cur, carry, runs);
    prev = cur;
  }
  FindDigitRuns(p, (n - 1) / 64 * 64, prev, 0, carry, runs);
}

// Runs of digits that start in the window at p + base (digit mask cur;
// next: the following window's), with two bytes of the line before them.
// carry: whether the byte before the window is a digit. Returns the carry
// for the next window.
inline uint64_t TrigramCollector::FindDigitRuns(const uint8_t* p, size_t base, uint64_t cur,
                                                uint64_t next, uint64_t carry,
                                                std::vector<DigitRun>* runs) {
  uint64_t starts = cur & ~((cur << 1) | carry);
  if (base == 0) starts &= ~uint64_t{3};
  while (starts != 0) {
    const auto s = static_cast<unsigned>(std::countr_zero(starts));
    starts &= starts - 1;
    const uint64_t run = s == 0 ? cur : (cur >> s) | (next << (64 - s));
    const uint8_t* q = p + base + s;
    runs->push_back(
        {static_cast<uint32_t>(base + s),
         static_cast<uint16_t>((uint32_t{FoldSkeleton(q[-2])} << 8) | Fold(q[-1])),
         static_cast<uint8_t>(std::min<unsigned>(std::countr_one(run), kMaxRunDigits))});
  }
  return cur >> 63;
}

// The run of digits at q (run.len of them counted); q[-1] is not a digit and
// q[-2] is in the same line.
[[gnu::always_inline]] inline void TrigramCollector::AddDigitRun(const uint8_t* q,
                                                                 const DigitRun& run) {
  const uint32_t ctx = run.ctx;
  const unsigned len = run.len;
  uint16_t& full = full_[ctx];
  uint16_t& firsts = first_digits_[ctx];
  const auto first = static_cast<uint16_t>(1u << (q[0] - '0'));
  const auto longer = static_cast<uint16_t>(((1u << len) - 1) & ~1u);  // groups k = 2..len
  // Its first digit is known and the longer groups are saturated: nothing
  // new (the common case for random numbers after a few lines).
  if ((firsts & first) && (full & longer) == longer) return;
  uint8_t* const row = &group_[size_t{ctx} * 8];  // counts per k > 1, then the last run's length
  uint32_t digits = 0;
  for (unsigned k = 0; k < len; ++k) digits = (digits << 4) | (q[k] - '0');
  if ((full & kContextTouched) == 0) {
    full |= kContextTouched;
    touched_.push_back(static_cast<uint16_t>(ctx));
  } else if (row[7] == len && last_[ctx] == digits) {
    return;  // the same digits as this context's last run: nothing new
  }
  row[7] = static_cast<uint8_t>(len);
  last_[ctx] = digits;
  firsts |= first;
  // Longest prefix first: a prefix already in the table went in with all of
  // its own prefixes (or found their groups saturated), so once one is
  // there the shorter ones have nothing to add.
  for (unsigned k = len; k >= 2; --k) {
    const auto bit = static_cast<uint16_t>(1u << (k - 1));
    if (full & bit) continue;
    if (digit_keys_.size() >= kMaxDigitKeys) {
      full |= bit;
      continue;
    }
    if (!InsertDigitKey(DigitKey(ctx, k, digits >> (4 * (len - k))))) break;
    if (++row[k - 2] > kDigitGroupMax) full |= bit;
  }
}

inline size_t TrigramCollector::Slot(uint64_t key) const {
  return static_cast<size_t>((key * 0x9e3779b97f4a7c15ull) >> table_shift_);
}

bool TrigramCollector::InsertDigitKey(uint64_t key) {
  if ((digit_keys_.size() + 1) * 2 > table_.size()) {
    table_.assign(table_.size() * 2, 0);
    --table_shift_;
    const size_t mask = table_.size() - 1;
    for (uint64_t k : digit_keys_) {
      size_t h = Slot(k);
      while (table_[h] != 0) h = (h + 1) & mask;
      table_[h] = k;
    }
  }
  const size_t mask = table_.size() - 1;
  for (size_t h = Slot(key);; h = (h + 1) & mask) {
    if (table_[h] == key) return false;
    if (table_[h] == 0) {
      table_[h] = key;
      digit_keys_.push_back(key);
      return true;
    }
  }
}

std::string TrigramCollector::Build() {
  auto group_full = [&](uint64_t key) {
    uint32_t ctx = static_cast<uint32_t>(key >> 40) & 0xffff;
    uint32_t k = static_cast<uint32_t>(key >> 32) & 0xf;
    return (full_[ctx] >> (k - 1)) & 1;
  };
  size_t keys = 0;
  for (uint32_t t : distinct_) keys += !IsDigitsTrigram(t);
  for (uint64_t key : digit_keys_) keys += !group_full(key);
  for (uint16_t ctx : touched_) {
    // Saturated keys of groups k >= 2, and the first digits (k = 1).
    keys +=
        static_cast<size_t>(std::popcount(static_cast<uint16_t>(full_[ctx] & ~kContextTouched)));
    keys += static_cast<size_t>(std::popcount(first_digits_[ctx]));
  }
  uint64_t bits_wanted = std::max<uint64_t>(64, uint64_t{keys} * kFilterBitsPerKey);
  uint32_t m = static_cast<uint32_t>(std::min<uint64_t>(bits_wanted, 0xfffffff8u));
  m = (m + 7) & ~7u;
  std::string out;
  PutFixed32(&out, m);
  out.push_back(static_cast<char>(kFilterHasFormat | kFilterHashes));
  out.push_back(static_cast<char>(kFilterFormatSkeletons));
  size_t head = out.size();
  out.resize(head + m / 8, '\0');
  auto* bits = reinterpret_cast<uint8_t*>(out.data() + head);
  auto set = [&](uint64_t key) {
    ForEachBit(key, m, [&](uint32_t b) { bits[b >> 3] |= static_cast<uint8_t>(1u << (b & 7)); });
  };
  for (uint32_t t : distinct_) {
    if (!IsDigitsTrigram(t)) set(t);
  }
  distinct_.clear();
  if (trigram_slots_.size() > kMaxKeptTrigramSlots) {
    trigram_slots_.assign(kMinTrigramSlots, 0);
    trigram_shift_ = kMinTrigramShift;
  } else {
    std::fill(trigram_slots_.begin(), trigram_slots_.end(), 0);
  }
  for (uint64_t key : digit_keys_) {
    if (!group_full(key)) set(key);
  }
  for (uint16_t ctx : touched_) {
    for (uint32_t d = 0; d < 10; ++d) {
      if ((first_digits_[ctx] >> d) & 1) set(DigitKey(ctx, 1, d));
    }
    for (uint32_t k = 2; k <= kMaxRunDigits; ++k) {
      if ((full_[ctx] >> (k - 1)) & 1) set(DigitKey(ctx, k, kSaturatedDigits));
    }
    full_[ctx] = 0;
    first_digits_[ctx] = 0;
    std::memset(&group_[size_t{ctx} * 8], 0, 8);
  }
  touched_.clear();
  digit_keys_.clear();
  skeletons_.clear();
  skeleton_bytes_.clear();
  runs_.clear();
  if (runs_.capacity() > (size_t{1} << 16)) std::vector<DigitRun>().swap(runs_);
  std::fill(skeleton_slots_.begin(), skeleton_slots_.end(), 0);
  // A block of unusually many distinct lines does not pin its table and
  // bytes for the blocks after it.
  if (skeleton_slots_.size() > (size_t{1} << 16)) std::vector<uint32_t>().swap(skeleton_slots_);
  if (skeleton_bytes_.capacity() > (size_t{1} << 20)) std::string().swap(skeleton_bytes_);
  std::fill(table_.begin(), table_.end(), 0);
  return out;
}

FilterKeys PatternFilterKeys(std::string_view pattern) {
  FilterKeys out;
  const auto* p = reinterpret_cast<const uint8_t*>(pattern.data());
  const size_t n = pattern.size();
  for (size_t i = 2; i < n; ++i) {
    uint32_t t = (uint32_t{Fold(p[i - 2])} << 16) | (uint32_t{Fold(p[i - 1])} << 8) | Fold(p[i]);
    if (!IsDigitsTrigram(t)) out.trigrams.push_back(t);
  }
  auto sort_unique = [](std::vector<uint32_t>* v) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  };
  sort_unique(&out.trigrams);
  for (size_t i = 2; i < n; ++i) {
    uint32_t t = (uint32_t{FoldSkeleton(p[i - 2])} << 16) |
                 (uint32_t{FoldSkeleton(p[i - 1])} << 8) | FoldSkeleton(p[i]);
    if (!IsDigitsTrigram(t)) out.skeleton_trigrams.push_back(t);
  }
  sort_unique(&out.skeleton_trigrams);
  // A run that starts inside the pattern, after two of its bytes, starts at
  // the same place in any line that holds the pattern and is at least as
  // long there: the line's run has every prefix key the pattern's run has.
  for (size_t i = 2; i < n; ++i) {
    if (!IsDigit(p[i]) || IsDigit(p[i - 1])) continue;
    const uint32_t ctx2 = (uint32_t{Fold(p[i - 2])} << 8) | Fold(p[i - 1]);
    const uint32_t ctx3 = (uint32_t{FoldSkeleton(p[i - 2])} << 8) | Fold(p[i - 1]);
    uint32_t digits = 0;
    for (size_t k = 1; k <= kMaxRunDigits && i + k - 1 < n && IsDigit(p[i + k - 1]); ++k) {
      digits = (digits << 4) | (p[i + k - 1] - '0');
      const auto kk = static_cast<uint32_t>(k);
      if (k >= kMinRunDigitsFormat2) out.digit_runs.push_back(DigitKey(ctx2, kk, digits));
      out.skeleton_digit_runs.push_back(DigitKey(ctx3, kk, digits));
    }
  }
  for (auto* keys : {&out.digit_runs, &out.skeleton_digit_runs}) {
    std::sort(keys->begin(), keys->end());
    keys->erase(std::unique(keys->begin(), keys->end()), keys->end());
  }
  return out;
}

bool FilterMayContain(std::string_view filter, const FilterKeys& keys) {
  if (filter.size() < 5) return true;
  const uint32_t m = DecodeFixed32(filter.data());
  const auto k = static_cast<uint8_t>(filter[4]);
  uint8_t format = 1;
  size_t head = 5;
  if (k == (kFilterHasFormat | kFilterHashes) && filter.size() >= 6) {
    format = static_cast<uint8_t>(filter[5]);
    head = 6;
  } else if (k != kFilterHashes) {
    return true;
  }
  if (format > kFilterFormatSkeletons || (head == 6 && format < kFilterFormatDigitRuns)) {
    return true;
  }
  if (m == 0 || m / 8 != filter.size() - head) return true;
  const auto* bits = reinterpret_cast<const uint8_t*>(filter.data() + head);
  auto has = [&](uint64_t key) {
    bool present = true;
    ForEachBit(key, m, [&](uint32_t b) { present = present && (bits[b >> 3] >> (b & 7)) & 1; });
    return present;
  };
  const auto& trigrams = format >= kFilterFormatSkeletons ? keys.skeleton_trigrams : keys.trigrams;
  for (uint32_t t : trigrams) {
    if (!has(t)) return false;
  }
  if (format >= kFilterFormatDigitRuns) {
    for (uint64_t key :
         format >= kFilterFormatSkeletons ? keys.skeleton_digit_runs : keys.digit_runs) {
      if (!has(key) && !has(SaturatedKey(key))) return false;
    }
  }
  return true;
}

}  // namespace vigil::logstore

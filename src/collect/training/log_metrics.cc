#include "collect/training/log_metrics.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/json_writer.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vigil::collect::training {
namespace {

// Bounds that keep one line's cost linear and small whatever its bytes.
constexpr size_t kMaxKeyLen = 96;   // bytes looked back for a key
constexpr size_t kMaxKeyWords = 5;  // "number of skipped iterations"
constexpr size_t kMaxUnitLen = 12;  // "samples/sec"
constexpr size_t kMaxSamplesPerSegment = 64;
constexpr size_t kMaxColumns = 16;  // YOLO table columns

// Character classes by table: the first pass touches every byte of every
// line, so one load per byte matters.
constexpr uint8_t kDigitBit = 1, kAlphaBit = 2, kKeyBit = 4, kSepBit = 8;
constexpr std::array<uint8_t, 256> MakeClasses() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if (c >= '0' && c <= '9') t[c] = kDigitBit | kKeyBit;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) t[c] = kAlphaBit | kKeyBit;
    if (c == '_' || c == '.' || c == '/' || c == '-') t[c] |= kKeyBit;
    if (c == '=' || c == ':' || c == '|' || c == '/') t[c] |= kSepBit;
  }
  return t;
}
constexpr std::array<uint8_t, 256> kClass = MakeClasses();
uint8_t ClassOf(char c) { return kClass[static_cast<unsigned char>(c)]; }
bool IsDigit(char c) { return ClassOf(c) & kDigitBit; }
bool IsAlpha(char c) { return ClassOf(c) & kAlphaBit; }
bool IsKeyChar(char c) { return ClassOf(c) & kKeyBit; }
bool IsWordChar(char c) { return IsAlpha(c) || IsDigit(c) || c == '_'; }
bool IsSpace(char c) { return c == ' ' || c == '\t'; }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsLower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (Lower(s[i]) != lower[i]) return false;
  }
  return true;
}

bool StartsWithLower(std::string_view s, std::string_view lower) {
  return s.size() >= lower.size() && EqualsLower(s.substr(0, lower.size()), lower);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Sixteen bytes at a time with GCC/Clang vector extensions (SSE2 on x86,
// NEON on Arm): most lines are rejected by this scan alone, and the scans of
// a line that may hold metrics visit only the bytes that can start something
// (a separator, a counter word) instead of testing every byte in turn.
using Bytes16 = uint8_t __attribute__((vector_size(16)));
bool AnyByte(Bytes16 mask) {
  uint64_t half[2];
  std::memcpy(half, &mask, 16);
  return (half[0] | half[1]) != 0;
}

// s[i..i+16), zero-padded past the end (no byte searched for is NUL).
Bytes16 Load16(std::string_view s, size_t i) {
  Bytes16 v{};
  if (i + 16 <= s.size()) {
    std::memcpy(&v, s.data() + i, 16);
  } else {
    std::memcpy(&v, s.data() + i, s.size() - i);
  }
  return v;
}

// Bit k set when byte k of a comparison result is set.
template <typename V>
uint32_t BitMask(V match) {
#if defined(__SSE2__)
  return static_cast<uint32_t>(_mm_movemask_epi8(reinterpret_cast<__m128i>(match)));
#else
  Bytes16 m = reinterpret_cast<Bytes16>(match);
  uint32_t bits = 0;
  for (int k = 0; k < 16; ++k) bits |= static_cast<uint32_t>(m[k] >> 7) << k;
  return bits;
#endif
}

// The bytes where the pair scan looks closer, in the 16 from s[base] (v):
// braces, '(', the separators, and a space before an 'i' (" is ").
[[gnu::always_inline]] inline uint32_t PairBits(Bytes16 v, std::string_view s, size_t base) {
  uint32_t i_next = BitMask(v == 'i') >> 1;
  if (base + 16 < s.size() && s[base + 16] == 'i') i_next |= 1u << 15;
  return BitMask((v == '{') | (v == '}') | (v == '(') | (v == '=') | (v == ':')) |
         (BitMask(v == ' ') & i_next);
}

// The bytes where a counter word ("epoch", "step", "iter") may start: an
// 'e', 's' or 'i' after no word byte (letter, digit, '_', '.', '/').
[[gnu::always_inline]] inline uint32_t HeadBits(Bytes16 v, std::string_view s, size_t base) {
  Bytes16 lower = v | 0x20;
  uint32_t starts = BitMask((lower == 'e') | (lower == 's') | (lower == 'i'));
  uint32_t word =
      BitMask((static_cast<Bytes16>(lower - 'a') < 26) | (static_cast<Bytes16>(v - '0') < 10) |
              (v == '_') | (v == '.') | (v == '/'));
  // The byte before each: this block's word bits one up, and the last
  // byte of the block before.
  uint32_t after_word = (word << 1) & 0xffff;
  if (base > 0) {
    char c = s[base - 1];
    if (IsWordChar(c) || c == '.' || c == '/') after_word |= 1;
  }
  return starts & ~after_word;
}

// What a line holds that decides which scans can find anything in it, and
// where the pair and counter-word scans look, all from one pass over it.
// The flags are of the raw line, so they bound those of each of its '\r'
// pieces after ANSI escapes are removed; the bits are only for a line that
// is parsed whole, and only for its first kMaxBlocks blocks.
constexpr size_t kMaxBlocks = 32;
struct LineBytes {
  bool controls = false;  // ESC or backspace: strip first
  bool cr = false;        // several progress updates
  bool paren = false;     // MMEngine's "Epoch(train)"
  bool bracket = false;   // tqdm's "[00:21<00:29, 19.61it/s]"
  bool pipes = false;     // two '|' or more: a table
  size_t blocks = 0;      // of pair_bits and head_bits
  uint32_t pair_bits[kMaxBlocks];
  uint32_t head_bits[kMaxBlocks];
};

void ScanLineBytes(std::string_view line, LineBytes* b) {
  // The flags are gathered as vectors (re-reading bytes is harmless to
  // them), the '|' count as bits.
  Bytes16 controls{}, cr{}, paren{}, bracket{};
  uint32_t pipe = 0, pipes = 0;
  size_t block = 0;
  for (size_t i = 0; i < line.size(); i += 16, ++block) {
    // The last block of a line of 16 bytes or more is read as the line's
    // last 16 bytes and its bits shifted down past those already seen: a
    // copy of fewer bytes into a zeroed block stalls the load after it.
    Bytes16 v;
    size_t at = i;
    if (i + 16 <= line.size()) {
      std::memcpy(&v, line.data() + i, 16);
    } else if (line.size() >= 16) {
      at = line.size() - 16;
      std::memcpy(&v, line.data() + at, 16);
    } else {
      v = Load16(line, i);
    }
    unsigned shift = static_cast<unsigned>(i - at);
    controls |= reinterpret_cast<Bytes16>((v == '\x1b') | (v == '\b'));
    cr |= reinterpret_cast<Bytes16>(v == '\r');
    paren |= reinterpret_cast<Bytes16>(v == '(');
    bracket |= reinterpret_cast<Bytes16>(v == '[');
    uint32_t here = BitMask(v == '|') >> shift;
    if (here != 0) {  // a second '|', in this block or after an earlier one
      pipes |= pipe | (here & (here - 1));
      pipe = here;
    }
    if (block < kMaxBlocks) {
      b->pair_bits[block] = PairBits(v, line, at) >> shift;
      b->head_bits[block] = HeadBits(v, line, at) >> shift;
    }
  }
  b->controls = AnyByte(controls);
  b->cr = AnyByte(cr);
  b->paren = AnyByte(paren);
  b->bracket = AnyByte(bracket);
  b->pipes = pipes != 0;
  b->blocks = std::min(block, kMaxBlocks);
}

// ---------------------------------------------------------------------------
// Names.

// Keys whose number is an identity or a setting, never a training metric:
// a PID, a rank, a port, Lightning's experiment version, an ETA.
bool BlockedKey(std::string_view lower) {
  static constexpr std::string_view kBlocked[] = {"eta",       "v_num",       "pid",
                                                  "rank",      "local_rank",  "global_rank",
                                                  "node_rank", "world_size",  "local_world_size",
                                                  "port",      "master_port", "seed",
                                                  "version",   "gpu",         "gpu_id",
                                                  "device",    "device_id",   "cuda",
                                                  "id",        "job_id",      "tid",
                                                  "year",      "date",        "num_workers"};
  for (std::string_view b : kBlocked) {
    if (lower == b) return true;
  }
  return false;
}

// A rate of training work: "train_samples_per_second", "img/s",
// "global_step/sec"; not libFuzzer's "exec/s".
bool ThroughputKey(std::string_view lower) {
  size_t per = lower.rfind("/s");
  if (per == std::string_view::npos || (lower.substr(per) != "/s" && lower.substr(per) != "/sec")) {
    per = lower.rfind("_per_sec");
  }
  if (per == std::string_view::npos) return false;
  size_t b = per;
  while (b > 0 && IsAlpha(lower[b - 1])) --b;
  static constexpr std::string_view kUnits[] = {
      "sample", "samples", "token",   "tokens",    "tok",   "toks",    "img",   "imgs",
      "image",  "images",  "example", "examples",  "it",    "iter",    "iters", "step",
      "steps",  "seq",     "seqs",    "sequences", "batch", "batches", "frames"};
  std::string_view unit = lower.substr(b, per - b);
  for (std::string_view u : kUnits) {
    if (unit == u) return true;
  }
  return false;
}

// A key a metric line would carry; gates lines that are not in a known
// format so prose and config dumps with numbers give nothing. Matches whole
// words of the key ("val_acc", "base_lr", "bbox_mAP_50"), not parts of
// words ("accumulation", "already").
bool MetricLookingKey(std::string_view lower, std::string_view written) {
  static constexpr std::string_view kWords[] = {
      "loss",       "acc",   "accuracy", "ppl", "perplexity", "mfu",       "reward", "f1",
      "bleu",       "rouge", "map",      "auc", "lr",         "learning",  "norm",   "gnorm",
      "throughput", "wer",   "cer",      "kl",  "entropy",    "precision", "recall"};
  if (ThroughputKey(lower)) return true;
  auto metric_word = [&](std::string_view word) {
    if (word.substr(0, 4) == "loss") return true;  // "lossD", "losses"
    if (word == "map") {                           // mAP, not a config's "map_location"
      return written.substr(static_cast<size_t>(word.data() - lower.data()), 3) != "map";
    }
    for (std::string_view w : kWords) {
      if (word == w) return true;
    }
    return false;
  };
  for (size_t i = 0; i < lower.size();) {
    while (i < lower.size() && !IsAlpha(lower[i]) && !IsDigit(lower[i])) ++i;
    size_t b = i;
    while (i < lower.size() && IsAlpha(lower[i])) ++i;
    size_t letters = i;
    while (i < lower.size() && (IsAlpha(lower[i]) || IsDigit(lower[i]))) ++i;
    // "f1", "top1" whole; "map50" by its letters.
    if (i > b &&
        (metric_word(lower.substr(b, i - b)) || metric_word(lower.substr(b, letters - b)))) {
      return true;
    }
  }
  return false;
}

// The key in lower case with ' ' and '-' as '_', in buf; false when it
// does not fit (no metric key is that long).
constexpr size_t kMaxNameLen = 192;
bool LowerKey(std::string_view key, char (&buf)[kMaxNameLen], std::string_view* lower) {
  if (key.size() > kMaxNameLen) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    char c = Lower(key[i]);
    buf[i] = c == ' ' || c == '-' ? '_' : c;
  }
  *lower = std::string_view(buf, key.size());
  return true;
}

std::string_view CanonicalOfLower(std::string_view k) {
  struct Alias {
    std::string_view from, to;
  };
  static constexpr Alias kAliases[] = {
      {"loss", "loss"},
      {"lm_loss", "loss"},
      {"lr", "learning_rate"},
      {"learning_rate", "learning_rate"},
      {"learningrate", "learning_rate"},
      {"grad_norm", "grad_norm"},
      {"gradient_norm", "grad_norm"},
      {"samples_per_second", "samples_per_second"},
      {"samples_per_sec", "samples_per_second"},
      {"samples/s", "samples_per_second"},
      {"samples/sec", "samples_per_second"},
      {"samples/second", "samples_per_second"},
      {"sample/s", "samples_per_second"},
      {"currsamplespersec", "samples_per_second"},
      {"tokens_per_second", "tokens_per_second"},
      {"tokens_per_sec", "tokens_per_second"},
      {"tok/s", "tokens_per_second"},
      {"tok/sec", "tokens_per_second"},
      {"tokens/s", "tokens_per_second"},
      {"tokens/sec", "tokens_per_second"},
      {"token/s", "tokens_per_second"},
      {"iterations_per_second", "iterations_per_second"},
      {"it/s", "iterations_per_second"},
      {"iter/s", "iterations_per_second"},
      {"iters/s", "iterations_per_second"},
      {"iterations/s", "iterations_per_second"},
      {"step", "step"},
      {"global_step", "step"},
      {"iter", "step"},
      {"iteration", "step"},
      {"num_updates", "step"},  // fairseq
      {"epoch", "epoch"},
  };
  for (const Alias& a : kAliases) {
    // The first byte first: a call to memcmp per alias showed in profiles.
    if (k.size() == a.from.size() && !k.empty() && k[0] == a.from[0] && k == a.from) return a.to;
  }
  return {};
}

// What a key as written says: its canonical name, whether it is never a
// metric's (blocked or too long) and whether it looks like one.
struct KeyFacts {
  std::string_view canonical;  // empty: none
  bool step = false;           // canonical is "step"
  bool rejected = false;
  bool metric_looking = false;
};

KeyFacts WorkOutKey(std::string_view written) {
  char buf[kMaxNameLen];
  std::string_view lower;
  KeyFacts facts;
  if (!LowerKey(written, buf, &lower) || BlockedKey(lower)) {
    facts.rejected = true;
    return facts;
  }
  facts.canonical = CanonicalOfLower(lower);
  facts.metric_looking = !facts.canonical.empty() || MetricLookingKey(lower, written);
  facts.step = facts.canonical == "step";
  return facts;
}

// The facts of the keys seen lately, kept by the extractor
// (LogMetricExtractor::key_memo_, of this type): a job writes the same few
// keys on every line, and working them out again was most of the cost of a
// pair. Four-way set-associative by a hash of the key, so that a few keys
// that hash alike do not evict each other on every line (a new key takes a
// free way, else the last); a slot holds the key and its facts packed in a
// byte. Only the bytes of the key decide its facts.
using KeyMemoSlots = std::vector<std::pair<std::string, uint8_t>>;
constexpr size_t kKeyMemoSetBits = 4;  // 16 sets
constexpr size_t kKeyMemoWays = 4;
constexpr std::string_view kCanonicalNames[] = {"",
                                                "loss",
                                                "learning_rate",
                                                "grad_norm",
                                                "samples_per_second",
                                                "tokens_per_second",
                                                "iterations_per_second",
                                                "step",
                                                "epoch"};
constexpr uint8_t kStepIndex = 7;
static_assert(kCanonicalNames[kStepIndex] == "step");
constexpr uint8_t kRejectedBit = 0x10, kMetricLookingBit = 0x20, kCanonicalMask = 0x0f;

size_t KeyMemoSet(std::string_view key) {
  uint64_t head = 0, tail = 0;
  if (key.size() >= 8) {  // the first and last eight bytes
    std::memcpy(&head, key.data(), 8);
    std::memcpy(&tail, key.data() + key.size() - 8, 8);
  } else if (key.size() >= 4) {  // the first and last four
    uint32_t first, last;
    std::memcpy(&first, key.data(), 4);
    std::memcpy(&last, key.data() + key.size() - 4, 4);
    head = first;
    tail = last;
  } else {
    for (char c : key) head = head << 8 | static_cast<uint8_t>(c);
  }
  uint64_t h = (head * 0x9e3779b97f4a7c15u) ^ ((tail + key.size()) * 0xc2b2ae3d27d4eb4fu);
  return static_cast<size_t>((h ^ (h >> 29)) * 0x9e3779b97f4a7c15u >> (64 - kKeyMemoSetBits));
}

// a == b for keys: most are 4 to 16 bytes, compared in two overlapping
// loads each rather than by a call to memcmp.
bool SameKey(std::string_view a, std::string_view b) {
  size_t n = a.size();
  if (n != b.size()) return false;
  if (n >= 8 && n <= 16) {
    uint64_t a0, a1, b0, b1;
    std::memcpy(&a0, a.data(), 8);
    std::memcpy(&a1, a.data() + n - 8, 8);
    std::memcpy(&b0, b.data(), 8);
    std::memcpy(&b1, b.data() + n - 8, 8);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  if (n >= 4 && n < 8) {
    uint32_t a0, a1, b0, b1;
    std::memcpy(&a0, a.data(), 4);
    std::memcpy(&a1, a.data() + n - 4, 4);
    std::memcpy(&b0, b.data(), 4);
    std::memcpy(&b1, b.data() + n - 4, 4);
    return ((a0 ^ b0) | (a1 ^ b1)) == 0;
  }
  return a == b;
}

KeyFacts KeyFactsOf(std::string_view written, KeyMemoSlots* memo) {
  if (written.empty()) return WorkOutKey(written);
  if (memo->empty()) memo->resize(kKeyMemoWays << kKeyMemoSetBits);
  auto* set = &(*memo)[kKeyMemoWays * KeyMemoSet(written)];
  size_t way = 0;
  while (way < kKeyMemoWays && !SameKey(set[way].first, written)) ++way;
  if (way == kKeyMemoWays) {  // not there: work it out and keep it
    KeyFacts facts = WorkOutKey(written);
    size_t index = 0;
    while (index < std::size(kCanonicalNames) && kCanonicalNames[index] != facts.canonical) {
      ++index;
    }
    if (index == std::size(kCanonicalNames)) return facts;  // not a name above: not kept
    way = 0;
    while (way < kKeyMemoWays - 1 && !set[way].first.empty()) ++way;
    set[way].first.assign(written);
    set[way].second = static_cast<uint8_t>(index | (facts.rejected ? kRejectedBit : 0) |
                                           (facts.metric_looking ? kMetricLookingBit : 0));
  }
  uint8_t packed = set[way].second;
  KeyFacts facts;
  facts.canonical = kCanonicalNames[packed & kCanonicalMask];
  facts.step = (packed & kCanonicalMask) == kStepIndex;
  facts.rejected = packed & kRejectedBit;
  facts.metric_looking = packed & kMetricLookingBit;
  return facts;
}

// ---------------------------------------------------------------------------
// Values.

// "nan", "NaN", "inf", "-Infinity": Python, JSON and C spellings.
bool ParseNonFinite(std::string_view s, size_t i, double* v, size_t* end) {
  bool neg = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) {
    neg = s[i] == '-';
    ++i;
  }
  std::string_view rest = s.substr(std::min(i, s.size()));
  size_t n = 0;
  if (StartsWithLower(rest, "infinity")) {
    n = 8;
  } else if (StartsWithLower(rest, "inf")) {
    n = 3;
  } else if (StartsWithLower(rest, "nan")) {  // C's printf writes "-nan" too
    *v = std::numeric_limits<double>::quiet_NaN();
    *end = i + 3;
    return !(i + 3 < s.size() && IsWordChar(s[i + 3]));
  } else {
    return false;
  }
  if (i + n < s.size() && IsWordChar(s[i + n])) return false;
  *v = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  *end = i + n;
  return true;
}

// Powers of ten that are exact doubles.
constexpr double kExactPowersOf10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// Whether p[0..8) are all digits, and their value: SWAR, as in simdjson and
// fast_float.
bool EightDigits(const char* p, uint64_t* value) {
  if constexpr (std::endian::native != std::endian::little) return false;
  uint64_t x;
  std::memcpy(&x, p, 8);
  if ((((x + 0x4646464646464646u) | (x - 0x3030303030303030u)) & 0x8080808080808080u) != 0) {
    return false;
  }
  x -= 0x3030303030303030u;  // little-endian: p[0] is the low byte
  x = x * 10 + (x >> 8);
  x = (((x & 0x000000ff000000ffu) * (100 + (1000000ull << 32))) +
       (((x >> 16) & 0x000000ff000000ffu) * (1 + (10000ull << 32)))) >>
      32;
  *value = x;
  return true;
}

// A decimal number at s[i]: [+-] digits [. digits] [e[+-]digits], or a
// non-finite word. *end is the first byte after it.
bool ParseNumber(std::string_view s, size_t i, double* v, size_t* end) {
  size_t j = i;
  bool negative = j < s.size() && s[j] == '-';
  if (j < s.size() && (s[j] == '-' || s[j] == '+')) ++j;
  // The digits are summed as they are scanned, eight at a time where there
  // are eight, for the fast path below (the sum wraps past 19 digits, and
  // is then not used).
  uint64_t mantissa = 0;
  auto add_digits = [&](size_t k) {
    for (uint64_t eight; k + 8 <= s.size() && EightDigits(s.data() + k, &eight); k += 8) {
      mantissa = mantissa * 100000000 + eight;
    }
    for (; k < s.size(); ++k) {
      unsigned digit = static_cast<unsigned char>(s[k]) - unsigned{'0'};
      if (digit > 9) break;
      mantissa = mantissa * 10 + digit;
    }
    return k;
  };
  size_t digits_begin = j;
  j = add_digits(j);
  size_t int_digits = j - digits_begin;
  size_t frac_digits = 0;
  if (j < s.size() && s[j] == '.') {
    size_t f = add_digits(j + 1);
    frac_digits = f - j - 1;
    if (int_digits + frac_digits > 0) j = f;
  }
  if (int_digits + frac_digits == 0) return ParseNonFinite(s, i, v, end);
  int exponent = 0;
  bool long_exponent = false;
  if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
    size_t e = j + 1;
    bool negative_exponent = e < s.size() && s[e] == '-';
    if (e < s.size() && (s[e] == '-' || s[e] == '+')) ++e;
    size_t exp_begin = e;
    while (e < s.size() && IsDigit(s[e])) {
      if (e - exp_begin < 4) exponent = exponent * 10 + (s[e] - '0');
      ++e;
    }
    long_exponent = e - exp_begin > 4;
    if (negative_exponent) exponent = -exponent;
    if (e > exp_begin) j = e;
  }
  if (j - i > 64) return false;
  // Clinger's fast path: a mantissa below 2^53 and a power of ten up to
  // 1e22 are exact doubles, so one multiplication or division rounds
  // correctly and gives what from_chars gives, at a fraction of its cost.
  int scale = exponent - static_cast<int>(frac_digits);
  if (int_digits + frac_digits <= 19 && !long_exponent && mantissa < (uint64_t{1} << 53) &&
      scale >= -22 && scale <= 22) {
    double m = static_cast<double>(mantissa);
    double r = scale < 0 ? m / kExactPowersOf10[-scale] : m * kExactPowersOf10[scale];
    *v = negative ? -r : r;
    *end = j;
    return true;
  }
  size_t from = s[i] == '+' ? i + 1 : i;
  auto r = std::from_chars(s.data() + from, s.data() + j, *v);
  if (r.ec != std::errc() || r.ptr != s.data() + j) return false;
  *end = j;
  return true;
}

enum class UnitKind { kNone, kStripped, kRate, kInverseRate, kUnknown };

struct Unit {
  UnitKind kind = UnitKind::kNone;
  std::string_view rate_name;  // canonical name for a rate unit
  size_t end = 0;
};

// What a unit written right after a number means. Times, sizes and
// percentages are dropped (the value is kept as written); a rate names the
// value; anything else means the token was not a plain number ("3rd").
Unit ClassifyUnit(std::string_view u) {
  Unit unit;
  if (u.empty()) return unit;
  static constexpr std::string_view kStripped[] = {
      "%",  "ms", "s",  "sec",    "us",     "µs",      "ns",      "min",     "h",     "b",
      "kb", "mb", "gb", "tb",     "kib",    "mib",     "gib",     "tib",     "k",     "m",
      "g",  "t",  "x",  "tflops", "gflops", "tflop/s", "gflop/s", "ms/step", "ms/it", "s/step"};
  if (u.size() > kMaxUnitLen) {
    unit.kind = UnitKind::kUnknown;
    return unit;
  }
  char buf[kMaxUnitLen];
  for (size_t i = 0; i < u.size(); ++i) buf[i] = Lower(u[i]);
  std::string_view lower(buf, u.size());
  if (lower == "s/it") {  // tqdm's slow loops: first, as every bar has a rate
    unit.kind = UnitKind::kInverseRate;
    unit.rate_name = "iterations_per_second";
    return unit;
  }
  // Most units are one or two bytes: those without a loop over the list.
  bool stripped = false;
  if (lower.size() == 1) {
    switch (lower[0]) {
      case '%':
      case 's':
      case 'h':
      case 'b':
      case 'k':
      case 'm':
      case 'g':
      case 't':
      case 'x':
        stripped = true;
        break;
    }
  } else if (lower.size() == 2 && lower[1] == 's') {
    stripped = lower[0] == 'm' || lower[0] == 'u' || lower[0] == 'n';
  } else if (lower.size() == 2 && lower[1] == 'b') {
    stripped = lower[0] == 'k' || lower[0] == 'm' || lower[0] == 'g' || lower[0] == 't';
  } else if (lower.size() > 2) {
    for (std::string_view k : kStripped) {
      if (lower.size() == k.size() && lower[0] == k[0] && lower == k) {
        stripped = true;
        break;
      }
    }
  }
  if (stripped) {
    unit.kind = UnitKind::kStripped;
    return unit;
  }
  // The names of rates that fit in a unit all have a '/' ("tok/s"): those
  // without ("tokens_per_sec") are longer than kMaxUnitLen.
  size_t slash = std::string_view::npos;  // a loop: a call to memchr costs more here
  for (size_t i = 0; i < lower.size() && slash == std::string_view::npos; ++i) {
    if (lower[i] == '/') slash = i;
  }
  std::string_view canonical =
      slash == std::string_view::npos ? std::string_view() : CanonicalOfLower(lower);
  if (!canonical.empty() && canonical.find("per_second") != std::string_view::npos) {
    unit.kind = UnitKind::kRate;
    unit.rate_name = canonical;
    return unit;
  }
  // Other rates ("images/s", "examples/sec") name no canonical series; after
  // a key they are units like any other.
  std::string_view per = slash == std::string_view::npos ? "" : lower.substr(slash);
  bool letters = slash != std::string_view::npos && slash > 0;
  for (size_t i = 0; letters && i < slash; ++i) letters = IsAlpha(lower[i]);
  unit.kind = letters && (per == "/s" || per == "/sec") ? UnitKind::kStripped : UnitKind::kUnknown;
  return unit;
}

bool IsUnitChar(char c) { return IsAlpha(c) || c == '%' || c == '/' || c == '\xc2' || c == '\xb5'; }

// The unit glued to a number at s[i] ("123.45ms", "12.3%", "19.61it/s").
Unit ReadUnit(std::string_view s, size_t i) {
  size_t j = i;
  while (j < s.size() && j - i <= kMaxUnitLen && IsUnitChar(s[j])) ++j;
  Unit unit = ClassifyUnit(s.substr(i, j - i));
  unit.end = j;
  if (j - i > kMaxUnitLen) unit.kind = UnitKind::kUnknown;
  return unit;
}

// ---------------------------------------------------------------------------
// Keys.

// A key's name is the segment's own bytes when it is written as one token
// (most keys), else it is written into the segment's name arena (a string
// the extractor keeps, so a warm extractor allocates nothing for it).
struct Key {
  size_t off = 0, len = 0;  // as written, words joined with '_'
  bool in_line = false;     // off is in the segment, not the arena
  bool multi_word = false;
};

bool LevelWord(std::string_view w) {
  static constexpr std::string_view kLevels[] = {"INFO",  "WARN",     "WARNING", "ERROR",
                                                 "DEBUG", "CRITICAL", "NOTICE",  "TRACE"};
  for (std::string_view l : kLevels) {
    if (w == l) return true;
  }
  return false;
}

// Appends `words` to out[start..] with each run of separators as one '_':
// "learning rate" → learning_rate. In a unit ("TFLOP/s/GPU") '/' and '.'
// separate too.
void AppendNormalized(std::string* out, size_t start, std::string_view words, bool unit) {
  // Written in place after growing the string once (this runs for every
  // key): the result is never longer than `words`, as each '_' stands for at
  // least one byte dropped.
  size_t size = out->size();
  out->resize(size + words.size());
  char* base = out->data();
  char* p = base + size;
  bool gap = false;
  for (char c : words) {
    bool keep = IsWordChar(c) || static_cast<unsigned char>(c) >= 0x80 ||
                (!unit && (c == '.' || c == '/' || c == '-'));
    if (!keep) {
      gap = true;
      continue;
    }
    if (gap && p > base + start && p[-1] != '_') *p++ = '_';
    *p++ = c;
    gap = false;
  }
  out->resize(static_cast<size_t>(p - base));
}

// The key that ends right before s[end]: 'quoted', "quoted", a bare
// token, or up to kMaxKeyWords words with an optional "(unit)" after them
// (Megatron's "elapsed time per iteration (ms)").
bool KeyBefore(std::string_view s, size_t end, bool allow_words, std::string* arena, Key* key) {
  size_t floor = end > kMaxKeyLen ? end - kMaxKeyLen : 0;
  key->off = arena->size();
  if (end > 0 && (s[end - 1] == '\'' || s[end - 1] == '"')) {
    char q = s[end - 1];
    size_t b = end - 1;
    bool space = false;
    while (b > floor && s[b - 1] != q) {
      // A name is key bytes and spaces; a '\n', ',' or '{' before the quote
      // is not a name either.
      char c = s[b - 1];
      if (!IsKeyChar(c) && c != ' ') return false;
      space = space || c == ' ';
      --b;
    }
    if (b == floor || b + 1 >= end) return false;
    std::string_view name = s.substr(b, end - 1 - b);
    if (name.empty() || !(IsAlpha(name[0]) || name[0] == '_')) return false;
    key->multi_word = space;
    if (!key->multi_word) {  // written as it stands: no copy
      key->in_line = true;
      key->off = b;
      key->len = name.size();
      return true;
    }
    AppendNormalized(arena, key->off, name, false);
    key->len = arena->size() - key->off;
    return key->len > 0;
  }
  size_t e = end;
  std::string_view paren;
  if (e > 0 && s[e - 1] == ')') {
    size_t b = e - 1;
    while (b > floor && s[b - 1] != '(') {
      if (s[b - 1] == '|' || s[b - 1] == ')') return false;
      --b;
    }
    if (b == floor || b < 2 || s[b - 2] != ' ') return false;
    paren = s.substr(b, e - 1 - b);
    e = b - 2;
  }
  size_t b = e;
  while (b > floor && IsKeyChar(s[b - 1])) --b;
  std::string_view token = s.substr(b, e - b);
  // "epoch=0/micro_step=1": a value and '/' before the key belong to the
  // pair before.
  while (!token.empty() && !(IsAlpha(token[0]) || token[0] == '_')) {
    size_t slash = token.find('/');
    if (slash == std::string_view::npos) return false;
    token.remove_prefix(slash + 1);
    b = e - token.size();
  }
  if (token.empty() || token.back() == '.' || token.back() == '-') return false;
  // More words before it, each a run of letters after a single space.
  size_t words = 1;
  size_t begin = b;
  while (allow_words && words < kMaxKeyWords && begin >= 2 && begin > floor + 1 &&
         s[begin - 1] == ' ' && IsAlpha(s[begin - 2])) {
    size_t w = begin - 1;
    while (w > floor && (IsAlpha(s[w - 1]) || s[w - 1] == '_')) --w;
    if (w > 0 && (IsKeyChar(s[w - 1]) || s[w - 1] == '\'' || s[w - 1] == '"')) break;
    if (LevelWord(s.substr(w, begin - 1 - w))) break;
    size_t before = w;
    while (before > floor && IsSpace(s[before - 1])) --before;
    if (before > 1 && (s[before - 1] == ':' || s[before - 1] == '=') && IsKeyChar(s[before - 2])) {
      break;  // a value: "mode: train loss: 0.1"
    }
    begin = w;
    ++words;
  }
  if (begin != b && !IsAlpha(s[begin])) return false;
  if (begin == b && paren.empty()) {  // one token, all key bytes: no copy
    key->in_line = true;
    key->off = b;
    key->len = e - b;
    key->multi_word = false;
    return true;
  }
  AppendNormalized(arena, key->off, s.substr(begin, e - begin), false);
  if (!paren.empty()) {
    arena->push_back('_');
    AppendNormalized(arena, arena->size(), paren, true);
    while (arena->size() > key->off && arena->back() == '_') arena->pop_back();
  }
  key->len = arena->size() - key->off;
  key->multi_word = words > 1 || !paren.empty();
  return key->len > 0;
}

// Whether a key with its separator starts at s[i] ("lr: ", "val_loss=",
// "learning rate:"): what may follow a value in a run of pairs.
bool KeyAhead(std::string_view s, size_t i) {
  if (i < s.size() && (s[i] == '\'' || s[i] == '"')) ++i;
  size_t limit = std::min(s.size(), i + kMaxKeyLen);
  if (i >= limit || !(IsAlpha(s[i]) || s[i] == '_')) return false;
  size_t words = 0;
  while (i < limit && words < kMaxKeyWords) {
    while (i < limit && IsKeyChar(s[i])) ++i;
    ++words;
    if (i < limit && (s[i] == '\'' || s[i] == '"')) ++i;
    if (i < limit && (s[i] == '=' || s[i] == ':')) return true;
    if (i + 1 < limit && s[i] == ' ' && s[i + 1] == '(') {
      size_t close = s.substr(0, limit).find(')', i);
      if (close == std::string_view::npos) return false;
      i = close + 1;
      return i < s.size() && s[i] == ':';
    }
    if (i + 1 < limit && s[i] == ' ' && IsAlpha(s[i + 1])) {
      ++i;
      continue;
    }
    if (i < limit && s[i] == ' ' && i + 1 < limit && s[i + 1] == '=') return true;
    return false;
  }
  return false;
}

// Whether the value that ended at s[j] is complete: the end, a delimiter,
// or spaces then another pair, a delimiter or Keras' " - ".
bool ValueEnds(std::string_view s, size_t j) {
  if (j >= s.size()) return true;
  char c = s[j];
  if (c == ',') return !(j + 1 < s.size() && IsDigit(s[j + 1]));  // "10,000"
  if (c == ';' || c == '|' || c == ')' || c == ']' || c == '}') return true;
  if (c == '/') return j + 1 < s.size() && IsAlpha(s[j + 1]);   // "epoch=0/micro_step=1"
  if (c == ':') return j + 1 >= s.size() || IsSpace(s[j + 1]);  // tqdm "desc: 42%"
  if (!IsSpace(c)) return false;
  size_t k = j;
  while (k < s.size() && IsSpace(s[k])) ++k;
  if (k == s.size()) return true;
  c = s[k];
  if (c == ',' || c == ';' || c == '|' || c == ')' || c == ']' || c == '}') return true;
  if (c == '(') return true;  // torchvision's "loss: 2.1234 (2.3012)": the value, then an average
  if (c == '-') return k + 1 == s.size() || IsSpace(s[k + 1]);
  return KeyAhead(s, k);
}

// YOLO's training table header "      Epoch    GPU_mem   box_loss ..." has
// neither digits nor separators; its first word is enough to look closer.
bool TableHeader(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && i < 64 && IsSpace(line[i])) ++i;
  return line.substr(i, 6) == "Epoch " && line.find("GPU_mem") != std::string_view::npos;
}

// ---------------------------------------------------------------------------
// One '\r'-separated progress update.

enum class Source : uint8_t {
  kPair,    // key=value, key: value
  kCell,    // "| key value |", nanoGPT "loss 2.34,"
  kHead,    // "Epoch 3/10", "iter 100:", "iteration 100/ 500000 |"
  kBar,     // tqdm / Keras n/total and rate
  kColumn,  // YOLO table row under its header
  kFormat,  // MMEngine "Epoch(train) [1][50/500]"
};

// Trivial, so that the parser's array of them costs nothing to set up;
// each is made with Candidate{} (all zero) and then filled in.
struct Candidate {
  size_t pos;         // where the value is written: the order of output
  const char* fixed;  // a canonical or column name of fixed_len bytes, or null:
  size_t fixed_len;   //
  size_t name_off;    // the name as written, in the segment or the arena
  size_t name_len;    //
  bool name_in_line;  // in the segment
  double value;
  Source source;
  bool is_step;
  int step_rank;  // lower wins: a keyed step beats a bar's n
  bool multi_word;
  bool metric_looking;
  bool strong;  // heads: at the start of the segment, set off
  bool keep;

  void SetFixed(std::string_view name) {
    fixed = name.data();
    fixed_len = name.size();
  }
};

class SegmentParser {
 public:
  // `arena` holds the names of keys as written; `*_columns` the YOLO
  // table headers, kept across lines.
  // `line` describes the physical line the segment comes from; `whole`
  // says the segment is all of it, so its counts are the segment's own.
  SegmentParser(std::string_view s, const LineBytes& line, bool whole, std::string* arena,
                KeyMemoSlots* key_memo, std::vector<std::string>* train_columns,
                std::vector<std::string>* val_columns)
      : s_(s),
        line_(line),
        whole_(whole),
        arena_(arena),
        key_memo_(key_memo),
        train_columns_(train_columns),
        val_columns_(val_columns) {
    arena_->clear();
  }

  void Parse(std::vector<MetricSample>* out);

 private:
  bool Full() const { return count_ >= kMaxSamplesPerSegment; }
  // A new candidate, all zero, or null when full. Built where it stays:
  // copying one in from the stack stalled on store forwarding.
  Candidate* NewCandidate() {
    if (Full()) return nullptr;
    Candidate* c = &found_[count_++];
    *c = Candidate{};
    return c;
  }
  // `name` must outlive the segment: a literal or a column header.
  Candidate* Add(size_t pos, std::string_view name, double value, Source source) {
    Candidate* c = NewCandidate();
    if (c == nullptr) return nullptr;
    c->pos = pos;
    c->SetFixed(name);
    c->value = value;
    c->source = source;
    return c;
  }
  // Adds a keyed value under its canonical name; false when the key is
  // blocked or a step that is not a whole number.
  bool AddKeyed(size_t pos, const Key& key, double value, Source source);
  std::string_view Name(const Candidate& c) const {
    if (c.fixed_len > 0) return std::string_view(c.fixed, c.fixed_len);
    return (c.name_in_line ? s_ : std::string_view(*arena_)).substr(c.name_off, c.name_len);
  }

  void ScanPairs();
  bool PairAt(size_t sep);
  bool PairIs(size_t at);
  // *at: where the number itself starts (inside "[...]" or "tensor(").
  bool ValueAt(size_t i, double* v, size_t* at, size_t* end);
  void ScanHeads();
  size_t ReadHead(size_t i, size_t first_text);
  void ScanCells(std::string_view region, size_t offset, char delim);
  bool CellPair(std::string_view cell, size_t offset);
  void ScanTqdm();
  void ScanKeras();
  void ScanMMEngine();
  bool ScanYolo(std::string_view text, size_t offset, bool* training_row);
  bool TrainingDescription(std::string_view desc);
  void Finish(std::vector<MetricSample>* out);

  std::string_view s_;
  const LineBytes& line_;
  bool whole_;
  std::string* arena_;
  KeyMemoSlots* key_memo_;
  std::vector<std::string>* train_columns_;
  std::vector<std::string>* val_columns_;
  // On the stack: a line with candidates but no metric allocates nothing.
  std::array<Candidate, kMaxSamplesPerSegment> found_;
  size_t count_ = 0;
  bool structured_ = false;                     // a known format: its pairs need no gate
  bool config_ = false;                         // arguments or a config dump, not metrics
  size_t head_colon_ = std::string_view::npos;  // "iter 100:" → cells after
  size_t tqdm_begin_ = std::string_view::npos;  // a tqdm bar: "42%|███| 4/8 "
  size_t tqdm_end_ = 0;
};

bool SegmentParser::AddKeyed(size_t pos, const Key& key, double value, Source source) {
  std::string_view written =
      (key.in_line ? s_ : std::string_view(*arena_)).substr(key.off, key.len);
  KeyFacts facts = KeyFactsOf(written, key_memo_);
  if (facts.rejected) return false;
  std::string_view canonical = facts.canonical;
  bool is_step = facts.step;
  if (is_step && !(std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9e15)) {
    return false;  // DeepSpeed's "step: 5.67" is a time in ms
  }
  Candidate* c = Add(pos, canonical, value, source);
  if (c == nullptr) return false;
  c->is_step = is_step;
  c->multi_word = key.multi_word && canonical.empty();
  c->metric_looking = facts.metric_looking;
  c->name_off = key.off;
  c->name_len = key.len;
  c->name_in_line = key.in_line;
  return true;
}

// A value after a separator: a number with an optional unit, a one-element
// list "[0.0001]" (DeepSpeed's lr per group: the first), or a PyTorch
// "tensor(0.5, device='cuda:0')".
bool SegmentParser::ValueAt(size_t i, double* v, size_t* at, size_t* end) {
  std::string_view s = s_;
  *at = i;
  if (i < s.size() && s[i] == '[') {
    size_t j = i + 1;
    while (j < s.size() && IsSpace(s[j])) ++j;
    *at = j;
    size_t e;
    if (!ParseNumber(s, j, v, &e)) return false;
    size_t close = s.substr(0, std::min(s.size(), e + 256)).find(']', e);
    if (close == std::string_view::npos) return false;
    for (size_t k = e; k < close; ++k) {
      if (s[k] == '[' || s[k] == '(') return false;
    }
    *end = close + 1;
    return ValueEnds(s, *end);
  }
  if (s.substr(i, 7) == "tensor(") {
    *at = i + 7;
    size_t e;
    if (!ParseNumber(s, i + 7, v, &e)) return false;
    size_t close = s.substr(0, std::min(s.size(), e + 128)).find(')', e);
    if (close == std::string_view::npos) return false;
    *end = close + 1;
    return ValueEnds(s, *end);
  }
  size_t e;
  if (!ParseNumber(s, i, v, &e)) return false;
  if (e + 1 < s.size() && s[e] == ' ' && IsUnitChar(s[e + 1])) {
    // A unit after one space: PaddlePaddle's "batch_cost: 1.1 s, ips: 7.2 samples/s".
    Unit spaced = ReadUnit(s, e + 1);
    if (spaced.kind != UnitKind::kUnknown && spaced.kind != UnitKind::kNone &&
        ValueEnds(s, spaced.end)) {
      *end = spaced.end;
      return true;
    }
  }
  Unit unit = ReadUnit(s, e);
  if (unit.kind == UnitKind::kUnknown) {
    *end = e;  // "0/micro_step=1": no unit, the value ends there or not at all
    return ValueEnds(s, e);
  }
  if (unit.end < s.size() && (IsDigit(s[unit.end]) || s[unit.end] == '.' || s[unit.end] == '_')) {
    return false;  // "1.2.3", "3e", "v1_2"
  }
  *end = unit.end;
  return ValueEnds(s, *end);
}

// MindSpore's LossMonitor: "epoch: 1 step: 1875, loss is 0.1234". Read
// only for a key that looks like a metric: "batch size is 32" is prose.
bool SegmentParser::PairIs(size_t at) {
  size_t i = at + 4;
  if (i >= tqdm_begin_ && i < tqdm_end_) return false;
  double v;
  size_t value_at, end;
  if (!ValueAt(i, &v, &value_at, &end)) return false;
  Key key;
  if (!KeyBefore(s_, at, false, arena_, &key)) return false;
  size_t before = count_;
  if (!AddKeyed(value_at, key, v, Source::kPair)) return false;
  if (!found_[before].metric_looking) {
    --count_;
    return false;
  }
  return true;
}

// key=value, key = value, key: value, 'key': value, "key":value.
bool SegmentParser::PairAt(size_t sep) {
  std::string_view s = s_;
  char c = s[sep];
  size_t i = sep + 1;
  bool quoted_key = sep > 0 && (s[sep - 1] == '\'' || s[sep - 1] == '"');
  if (c == ':') {
    if (i < s.size() && !IsSpace(s[i]) && !quoted_key) return false;  // "cuda:0", "10:00"
    if (sep > 0 && IsSpace(s[sep - 1])) return false;
  }
  size_t spaces = 0;
  while (i < s.size() && IsSpace(s[i]) && spaces < 32) ++i, ++spaces;
  if (i >= tqdm_begin_ && i < tqdm_end_) return false;  // "Map: 100%|" is a bar
  double v;
  size_t value_at, end;
  if (!ValueAt(i, &v, &value_at, &end)) return false;
  size_t key_end = sep;
  if (c == '=') {
    while (key_end > 0 && IsSpace(s[key_end - 1]) && sep - key_end < 64) --key_end;
  }
  // Words before a key: "learning rate: 0.1", HF's "Num Epochs = 3"; not
  // logfmt's "a=1 b=2", where the word before is the last value.
  bool allow_words = c == ':' || key_end < sep;
  Key key;
  if (!KeyBefore(s, key_end, allow_words, arena_, &key)) return false;
  return AddKeyed(value_at, key, v, Source::kPair);
}

void SegmentParser::ScanPairs() {
  int depth = 0;
  // Visits only the bytes that can matter (PairBits), found 16 at a time.
  for (size_t base = 0, block = 0; base < s_.size() && !Full(); base += 16, ++block) {
    uint32_t bits = whole_ && block < line_.blocks ? line_.pair_bits[block]
                                                   : PairBits(Load16(s_, base), s_, base);
    for (; bits != 0 && !Full(); bits &= bits - 1) {
      size_t i = base + static_cast<size_t>(std::countr_zero(bits));
      char c = s_[i];
      if (c == '{') ++depth;
      if (c == '}') --depth;
      if (c == ' ' && s_.substr(i, 4) == " is ") PairIs(i);
      if (c == '(' && i >= 9 && s_.substr(i - 9, 9) == "Namespace") config_ = true;
      if (c != '=' && c != ':') continue;
      // A nested object is a configuration ("params": {"lr": 0.0001}).
      if (depth >= 2) continue;
      if (c == '=') {
        size_t at = i + 1;
        while (at < s_.size() && IsSpace(s_[at]) && at - i < 8) ++at;
        std::string_view value = s_.substr(at, 6);
        if (value.substr(0, 5) == "dict(" || value.substr(0, 4) == "True" ||
            value.substr(0, 5) == "False" || value.substr(0, 4) == "None") {
          config_ = true;  // Python arguments: "amp=True", "optimizer=dict(lr=0.02)"
        }
      }
      PairAt(i);
    }
  }
}

// "Epoch 3/10", "Epoch [1/5], Step [100/600]", "iter 100:", "step    1/74 |",
// "iteration      100/  500000 |": a counter word, then its number.
void SegmentParser::ScanHeads() {
  std::string_view s = s_;
  size_t first_text = 0;
  while (first_text < s.size() && IsSpace(s[first_text])) ++first_text;
  // Visits only where a counter word may start (HeadBits), found 16 bytes
  // at a time.
  size_t next = 0;  // the end of the last word or head read
  for (size_t base = 0, block = 0; base < s.size() && !Full(); base += 16, ++block) {
    uint32_t bits = whole_ && block < line_.blocks ? line_.head_bits[block]
                                                   : HeadBits(Load16(s, base), s, base);
    for (; bits != 0 && !Full(); bits &= bits - 1) {
      size_t i = base + static_cast<size_t>(std::countr_zero(bits));
      if (i < next) continue;
      next = ReadHead(i, first_text);
    }
  }
}

// The counter word at s_[i] and its number; returns where to look on.
size_t SegmentParser::ReadHead(size_t i, size_t first_text) {
  std::string_view s = s_;
  // "epoch" goes on with a 'p', "step", "iter" and "iteration" with a 't':
  // most words are turned down here. (No other start lies inside the word,
  // so looking on right after its first byte is the same as after its end.)
  char second = i + 1 < s.size() ? Lower(s[i + 1]) : '\0';
  if (second != (Lower(s[i]) == 'e' ? 'p' : 't')) return i + 1;
  size_t w = i;
  while (w < s.size() && IsAlpha(s[w])) ++w;
  std::string_view word = s.substr(i, w - i);
  bool epoch = EqualsLower(word, "epoch");
  if (!epoch && !EqualsLower(word, "step") && !EqualsLower(word, "iter") &&
      !EqualsLower(word, "iteration")) {
    return w + 1;
  }
  size_t j = w;
  if (j < s.size() && s[j] == ':') ++j;  // PyTorch's example: "Train Epoch: 1 [...]"
  size_t spaces = 0;
  while (j < s.size() && IsSpace(s[j]) && spaces < 16) ++j, ++spaces;
  bool bracket = j < s.size() && s[j] == '[';
  if (bracket) ++j;
  if (spaces == 0 && !bracket) return i + 1;
  while (j < s.size() && IsSpace(s[j]) && bracket) ++j;
  size_t num = j;
  int64_t n = 0;
  while (j < s.size() && IsDigit(s[j]) && j - num < 15) n = n * 10 + (s[j++] - '0');
  if (j == num || (j < s.size() && (IsWordChar(s[j]) || s[j] == '.'))) return i + 1;
  size_t k = j;
  while (k < s.size() && IsSpace(s[k]) && k - j < 8) ++k;
  if (k < s.size() && s[k] == '/') {
    ++k;
    while (k < s.size() && IsSpace(s[k]) && k - j < 16) ++k;
    size_t total = k;
    while (k < s.size() && IsDigit(s[k]) && k - total < 15) ++k;
    if (k == total && !(k < s.size() && s[k] == '?')) return i + 1;
    if (k == total) ++k;
    j = k;
  }
  if (bracket) {
    if (j >= s.size() || s[j] != ']') return i + 1;
    ++j;
  }
  size_t f = j;
  while (f < s.size() && IsSpace(s[f])) ++f;
  // Set off by the end or a delimiter; "Step 1: check the drivers" is prose,
  // so text after a ':' makes the head count only next to pairs.
  bool set_off = f == s.size() || s[f] == ',' || s[f] == '|' || s[f] == ']' ||
                 (s[f] == ':' && Trim(s.substr(f + 1)).empty());
  if (f < s.size() && s[f] == ':' && head_colon_ == std::string_view::npos) head_colon_ = f;
  Candidate* head = Add(num, epoch ? "epoch" : "step", static_cast<double>(n), Source::kHead);
  if (head != nullptr) {
    head->is_step = !epoch;
    head->strong = set_off && i == first_text;
  }
  return std::max(j, i + 1);
}

// "loss 2.3456", "time 123.45ms", "train loss 11.01", "15424 tok/s": a cell
// of a pipe table or of a comma list after a head.
bool SegmentParser::CellPair(std::string_view cell, size_t offset) {
  std::string_view t = Trim(cell);
  if (t.empty() || t.find('=') != std::string_view::npos || t.find(':') != std::string_view::npos) {
    return false;
  }
  size_t lead = static_cast<size_t>(t.data() - cell.data());
  size_t last_space = t.rfind(' ');
  if (last_space == std::string_view::npos) return false;
  std::string_view tail = t.substr(last_space + 1);
  std::string_view head = Trim(t.substr(0, last_space));
  double v;
  size_t end;
  if (IsDigit(head.empty() ? 'x' : head[0]) || (head.size() > 1 && head[0] == '-')) {
    // "15424 tok/s": a value and its rate unit.
    if (!ParseNumber(head, 0, &v, &end) || end != head.size()) return false;
    Unit unit = ClassifyUnit(tail);
    if (unit.kind != UnitKind::kRate && unit.kind != UnitKind::kInverseRate) return false;
    if (unit.kind == UnitKind::kInverseRate) v = v == 0 ? 0 : 1 / v;
    Candidate* c = Add(offset + lead, unit.rate_name, v, Source::kCell);
    if (c != nullptr) c->metric_looking = true;
    return true;
  }
  if (!ParseNumber(tail, 0, &v, &end)) return false;
  Unit unit = ReadUnit(tail, end);
  if (unit.end != tail.size() || unit.kind == UnitKind::kUnknown) return false;
  size_t words = 1;
  for (char c : head) {
    if (c == ' ') ++words;
    if (!IsKeyChar(c) && c != ' ') return false;
  }
  if (head.empty() || !IsAlpha(head[0]) || words > 2) return false;
  Key key;
  key.off = arena_->size();
  AppendNormalized(arena_, key.off, head, false);
  key.len = arena_->size() - key.off;
  key.multi_word = words > 1;
  return AddKeyed(offset + lead + last_space + 1, key, v, Source::kCell);
}

void SegmentParser::ScanCells(std::string_view region, size_t offset, char delim) {
  size_t b = 0;
  while (b <= region.size() && !Full()) {
    size_t e = region.find(delim, b);
    if (e == std::string_view::npos) e = region.size();
    CellPair(region.substr(b, e - b), offset + b);
    b = e + 1;
  }
}

// "00:21" or "1:02:03": the start of tqdm's elapsed time.
bool TimeAt(std::string_view s, size_t i) {
  size_t j = i;
  while (j < s.size() && IsDigit(s[j]) && j - i < 4) ++j;
  if (j == i || j + 2 >= s.size() || s[j] != ':' || !IsDigit(s[j + 1]) || !IsDigit(s[j + 2])) {
    return false;
  }
  j += 3;
  if (j + 2 < s.size() && s[j] == ':' && IsDigit(s[j + 1]) && IsDigit(s[j + 2])) j += 3;
  return j < s.size() && (s[j] == '<' || s[j] == ',' || s[j] == ']');
}

// YOLO's table: "Epoch GPU_mem box_loss ... Size" heads training rows,
// "Class Images Instances Box(P R mAP50 mAP50-95)" heads validation rows.
bool SegmentParser::ScanYolo(std::string_view text, size_t offset, bool* training_row) {
  if (train_columns_->empty() && val_columns_->empty()) {
    // No header seen yet: only a header itself can be read, and its second
    // word says so ("Epoch GPU_mem ...", "Class Images ...").
    size_t i = 0;
    while (i < text.size() && IsSpace(text[i])) ++i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    while (i < text.size() && IsSpace(text[i])) ++i;
    size_t b = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    std::string_view second = text.substr(b, i - b);
    if (second != "GPU_mem" && second != "Images") return false;
  }
  std::array<std::string_view, kMaxColumns + 1> tokens;
  size_t n = 0;
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && IsSpace(text[i])) ++i;
    if (i == text.size()) break;
    size_t b = i;
    while (i < text.size() && !IsSpace(text[i])) ++i;
    if (n > kMaxColumns) return false;
    tokens[n++] = text.substr(b, i - b);
  }
  if (n < 3 || n > kMaxColumns) return false;
  if (tokens[0] == "Epoch" && tokens[1] == "GPU_mem") {
    train_columns_->assign(tokens.begin(), tokens.begin() + n);
    return true;
  }
  if (tokens[0] == "Class" && tokens[1] == "Images") {
    val_columns_->clear();
    std::string group;
    for (size_t i = 0; i < n; ++i) {
      std::string_view t = tokens[i];
      size_t open = t.find('(');
      if (open != std::string_view::npos) {
        group = t.substr(0, open) == "Box" ? "" : std::string(t.substr(0, open)) + "_";
        t.remove_prefix(open + 1);
      }
      bool close = !t.empty() && t.back() == ')';
      if (close) t.remove_suffix(1);
      val_columns_->push_back(group + std::string(t));
      if (close) group.clear();
    }
    return true;
  }
  auto cell = [&](size_t i, const std::string& name) {
    double v;
    size_t end;
    std::string_view t = tokens[i];
    if (!ParseNumber(t, 0, &v, &end)) return;
    Add(offset + static_cast<size_t>(t.data() - text.data()), name, v, Source::kColumn);
  };
  auto numeric = [&](size_t from) {
    for (size_t i = from; i < n; ++i) {
      double v;
      size_t end;
      if (!ParseNumber(tokens[i], 0, &v, &end)) return false;
      Unit unit = ReadUnit(tokens[i], end);
      if (unit.end != tokens[i].size() || unit.kind == UnitKind::kUnknown) return false;
    }
    return true;
  };
  std::string_view epoch = tokens[0];
  size_t slash = epoch.find('/');
  if (n == train_columns_->size() && slash != std::string_view::npos && slash > 0) {
    for (size_t i = 0; i < slash; ++i) {
      if (!IsDigit(epoch[i])) return false;
    }
    double v;
    size_t end;
    if (!numeric(1) || !ParseNumber(epoch, 0, &v, &end) || end != slash) return false;
    Add(offset + static_cast<size_t>(epoch.data() - text.data()), "epoch", v, Source::kColumn);
    for (size_t i = 1; i < n; ++i) cell(i, (*train_columns_)[i]);
    *training_row = true;
    return true;
  }
  if (n == val_columns_->size() && tokens[0] == "all" && numeric(1)) {
    for (size_t i = 1; i < n; ++i) cell(i, (*val_columns_)[i]);
    return true;
  }
  return false;
}

// A tqdm bar's description names what it counts. Only a training loop's
// bar gives a step and a rate: not "Loading checkpoint shards", "Map",
// "Validation DataLoader 0" or a download.
bool SegmentParser::TrainingDescription(std::string_view desc) {
  desc = Trim(desc);
  while (!desc.empty() && (desc.back() == ':' || IsSpace(desc.back()))) desc.remove_suffix(1);
  if (desc.empty()) return true;
  if (StartsWithLower(desc, "epoch") &&
      (desc.size() == 5 || IsSpace(desc[5]) || IsDigit(desc[5]) || desc[5] == '[')) {
    return true;
  }
  static constexpr std::string_view kWords[] = {"training",  "train",      "steps", "step",
                                                "iteration", "iterations", "fit"};
  for (std::string_view w : kWords) {
    if (EqualsLower(desc, w)) return true;
  }
  return false;
}

// tqdm: "desc: 42%|████▏ | 420/1000 [00:21<00:29, 19.61it/s, k=v]" and the
// forms without a total ("420it [00:21, 19.61it/s]").
void SegmentParser::ScanTqdm() {
  std::string_view s = s_;
  size_t open = 0;
  while (true) {
    open = s.find('[', open);
    if (open == std::string_view::npos) return;
    if (open >= 2 && s[open - 1] == ' ' && TimeAt(s, open + 1)) break;
    ++open;
  }
  // The counter: "420/1000", "420/?", "420it".
  size_t cend = open - 1;
  size_t cbegin = cend;
  while (cbegin > 0 && cend - cbegin < 32 && !IsSpace(s[cbegin - 1]) && s[cbegin - 1] != '|') {
    --cbegin;
  }
  std::string_view counter = s.substr(cbegin, cend - cbegin);
  size_t nd = 0;
  while (nd < counter.size() && IsDigit(counter[nd])) ++nd;
  bool integral = nd > 0 && nd < 16 && nd < counter.size() &&
                  (counter[nd] == '/' || counter.substr(nd) == "it");
  if (nd == 0) return;
  // The bar and percentage before it: "42%|████▏     | ".
  size_t desc_end = cbegin;
  if (cbegin >= 2 && s[cbegin - 1] == ' ' && s[cbegin - 2] == '|') {
    size_t bar = cbegin - 2;
    size_t floor = bar > 256 ? bar - 256 : 0;
    while (bar > floor && s[bar - 1] != '|') --bar;
    if (bar == floor) return;
    desc_end = bar - 1;
    size_t p = desc_end;
    if (p > 0 && s[p - 1] == '%') {
      --p;
      while (p > 0 && IsDigit(s[p - 1])) --p;
      while (p > 0 && s[p - 1] == ' ' && desc_end - p < 8) --p;
      desc_end = p;
    }
  } else if (cbegin > 0 && s[cbegin - 1] != ' ') {
    return;
  }
  tqdm_begin_ = desc_end;
  tqdm_end_ = open;
  std::string_view desc = s.substr(0, desc_end);
  while (!desc.empty() && (desc.back() == ':' || IsSpace(desc.back()))) desc.remove_suffix(1);
  bool training_row = false;
  bool yolo = !desc.empty() && ScanYolo(desc, 0, &training_row);
  bool training = training_row || (!yolo && TrainingDescription(desc));
  if (!training) return;
  structured_ = true;
  if (integral) {
    // The counter's nd (< 16) digits: a whole number, exact as a double.
    int64_t n = 0;
    for (size_t k = 0; k < nd; ++k) n = n * 10 + (counter[k] - '0');
    Candidate* c = Add(cbegin, "step", static_cast<double>(n), Source::kBar);
    if (c != nullptr) {
      c->is_step = true;
      c->step_rank = 1;
      c->strong = true;
    }
  }
  // The rate: the first field after the times.
  size_t comma = s.find(',', open);
  size_t close = s.find(']', open);
  if (comma == std::string_view::npos || (close != std::string_view::npos && close < comma)) {
    return;
  }
  size_t r = comma + 1;
  while (r < s.size() && IsSpace(s[r])) ++r;
  double v;
  size_t end;
  if (!ParseNumber(s, r, &v, &end)) return;
  size_t u = end;
  if (u < s.size() && s[u] == ' ') ++u;
  size_t ue = u;
  while (ue < s.size() && IsUnitChar(s[ue]) && ue - u <= kMaxUnitLen) ++ue;
  Unit unit = ClassifyUnit(s.substr(u, ue - u));
  if (unit.kind == UnitKind::kInverseRate) {
    v = v == 0 ? 0 : 1 / v;
  } else if (unit.kind != UnitKind::kRate) {
    return;
  }
  Candidate* rate = Add(r, unit.rate_name, v, Source::kBar);
  if (rate != nullptr) rate->strong = true;
}

// Keras: "100/100 [====] - 2s 20ms/step - loss: 0.3" and Keras 3's
// "100/100 ━━━━ 2s 20ms/step - loss: 0.3".
void SegmentParser::ScanKeras() {
  std::string_view s = s_;
  size_t i = 0;
  while (i < s.size() && IsSpace(s[i])) ++i;
  size_t num = i;
  int64_t n = 0;
  while (i < s.size() && IsDigit(s[i]) && i - num < 15) n = n * 10 + (s[i++] - '0');
  if (i == num || i >= s.size() || s[i] != '/') return;
  ++i;
  size_t total = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i == total || i + 2 >= s.size() || s[i] != ' ') return;
  std::string_view bar = s.substr(i + 1);
  bool classic =
      bar[0] == '[' && bar.size() > 1 && (bar[1] == '=' || bar[1] == '.' || bar[1] == '>');
  bool heavy = bar.substr(0, 3) == "\xe2\x94\x81";  // U+2501 '━'
  if (!classic && !heavy) return;
  structured_ = true;
  Candidate* c = Add(num, "step", static_cast<double>(n), Source::kBar);
  if (c != nullptr) {
    c->is_step = true;
    c->step_rank = 1;
    c->strong = true;
  }
}

// MMEngine: "Epoch(train)  [1][ 50/500]", "Iter(train) [  50/1000]",
// "Epoch(val) [1][100/100]".
void SegmentParser::ScanMMEngine() {
  std::string_view s = s_;
  size_t at = s.find("(train)");
  bool train = at != std::string_view::npos;
  if (!train) at = s.find("(val)");
  if (!train && at == std::string_view::npos) at = s.find("(test)");
  if (at == std::string_view::npos || at < 4) return;
  bool epoch_based = at >= 5 && s.substr(at - 5, 5) == "Epoch";
  bool iter_based = s.substr(at - 4, 4) == "Iter";
  if (!epoch_based && !iter_based) return;
  size_t i = s.find(')', at) + 1;
  auto bracket = [&](int64_t* n, size_t* pos, bool* fraction) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    if (i >= s.size() || s[i] != '[') return false;
    ++i;
    while (i < s.size() && IsSpace(s[i])) ++i;
    *pos = i;
    size_t b = i;
    *n = 0;
    while (i < s.size() && IsDigit(s[i]) && i - b < 15) *n = *n * 10 + (s[i++] - '0');
    if (i == b) return false;
    *fraction = i < s.size() && s[i] == '/';
    while (i < s.size() && s[i] != ']' && i - b < 32) ++i;
    if (i >= s.size() || s[i] != ']') return false;
    ++i;
    return true;
  };
  int64_t epoch = 0, iter = 0;
  size_t epoch_pos = 0, iter_pos = 0;
  bool fraction = false;
  if (epoch_based) {
    if (!bracket(&epoch, &epoch_pos, &fraction) || fraction) return;
    Add(epoch_pos, "epoch", static_cast<double>(epoch), Source::kFormat);
  }
  structured_ = true;
  if (!bracket(&iter, &iter_pos, &fraction) || !fraction || !train) return;
  Candidate* step = Add(iter_pos, "step", static_cast<double>(iter), Source::kFormat);
  if (step != nullptr) step->is_step = true;
}

void SegmentParser::Parse(std::vector<MetricSample>* out) {
  if (line_.bracket) ScanTqdm();  // it starts at the '[' of the times
  if (tqdm_begin_ == std::string_view::npos) {
    bool training_row = false;
    if ((!train_columns_->empty() || !val_columns_->empty() || TableHeader(s_)) &&
        ScanYolo(s_, 0, &training_row)) {
      structured_ = true;
    }
    ScanKeras();
  }
  if (line_.paren) ScanMMEngine();  // all its forms hold a '('
  ScanHeads();
  ScanPairs();
  if (head_colon_ != std::string_view::npos && tqdm_begin_ == std::string_view::npos) {
    ScanCells(s_.substr(head_colon_ + 1), head_colon_ + 1, ',');
  }
  if (tqdm_begin_ == std::string_view::npos && line_.pipes &&
      (whole_ || std::count(s_.begin(), s_.end(), '|') >= 2)) {
    ScanCells(s_, 0, '|');
  }
  Finish(out);
}

// Decides what of the candidates is a metric: the gate for lines in no
// known format, the step, the order, and attaches the step to the rest.
void SegmentParser::Finish(std::vector<MetricSample>* out) {
  if (count_ == 0) return;
  auto is_pair = [](const Candidate& c) {
    return c.source == Source::kPair || c.source == Source::kCell;
  };
  size_t pairs = 0;
  bool metric_looking = false;
  bool strong_head = false;
  bool in_order = true;  // found in order of appearance: no sort needed
  for (size_t i = 0; i < count_; ++i) {
    const Candidate& c = found_[i];
    if (i > 0 && found_[i - 1].pos > c.pos) in_order = false;
    if (is_pair(c)) {
      ++pairs;
      metric_looking |= c.metric_looking;
    }
    if (c.source == Source::kHead && c.strong) strong_head = true;
  }
  std::string_view tail = Trim(s_);
  bool dump_line = pairs == 1 && !tail.empty() && tail.back() == ',';  // "lr=5e-05," in a config
  bool gate = structured_ || strong_head || (metric_looking && !dump_line && !config_);
  // A key written twice ("weight(decay=0.0), bias(decay=0.0)") names no
  // one value. The pairs and their names are listed once, not per
  // comparison (left uninitialised: only the first `listed` are read).
  struct Listed {
    size_t pos;
    const char* name;
    size_t name_len;
  };
  Listed listed[kMaxSamplesPerSegment];
  size_t listed_count = 0;
  if (gate && pairs > 1) {
    for (size_t i = 0; i < count_; ++i) {
      if (!is_pair(found_[i])) continue;
      std::string_view name = Name(found_[i]);
      listed[listed_count++] = Listed{found_[i].pos, name.data(), name.size()};
    }
  }
  auto repeated = [&](const Candidate& c) {
    std::string_view name = Name(c);
    for (size_t i = 0; i < listed_count; ++i) {
      const Listed& o = listed[i];
      if (o.name_len == name.size() && o.pos != c.pos &&
          std::string_view(o.name, o.name_len) == name) {
        return true;
      }
    }
    return false;
  };
  size_t kept_pairs = 0;
  for (size_t i = 0; i < count_; ++i) {
    Candidate& c = found_[i];
    c.keep =
        !is_pair(c) || (gate && !(c.multi_word && !c.metric_looking && pairs < 2) && !repeated(c));
    if (c.keep && is_pair(c)) ++kept_pairs;
  }
  // A head in prose ("resuming from epoch 3") counts only next to pairs.
  for (size_t i = 0; i < count_; ++i) {
    Candidate& c = found_[i];
    if (c.source == Source::kHead && !c.strong && kept_pairs == 0 && !structured_) c.keep = false;
  }
  // Output in order of appearance: a stable insertion sort of at most
  // kMaxSamplesPerSegment indexes, mostly in order already.
  std::array<uint8_t, kMaxSamplesPerSegment> order;
  for (size_t i = 0; i < count_; ++i) {
    size_t j = i;
    if (in_order) {
      order[i] = static_cast<uint8_t>(i);
      continue;
    }
    while (j > 0 && found_[order[j - 1]].pos > found_[i].pos) {
      order[j] = order[j - 1];
      --j;
    }
    order[j] = static_cast<uint8_t>(i);
  }
  const Candidate* step = nullptr;
  for (size_t k = 0; k < count_; ++k) {
    const Candidate& c = found_[order[k]];
    if (c.keep && c.is_step && (step == nullptr || c.step_rank < step->step_rank)) step = &c;
  }
  // The step as a plain integer: an optional<int64_t> copied whole was read
  // back from the stack before its two stores had landed (a store-forwarding
  // stall per sample).
  int64_t step_value = step != nullptr ? static_cast<int64_t>(step->value) : 0;
  size_t last_pos = std::string_view::npos;
  for (size_t k = 0; k < count_; ++k) {
    const Candidate& c = found_[order[k]];
    if (!c.keep || c.pos == last_pos) continue;  // one value read two ways
    if (c.is_step && &c != step) continue;
    last_pos = c.pos;
    MetricSample& sample = out->emplace_back();
    std::string_view name = Name(c);
    sample.name.append(name.data(), name.size());  // into an empty string: cheaper than assign
    sample.value = c.value;
    if (step != nullptr) sample.step.emplace(step_value);
  }
}

bool SameSample(const MetricSample& a, const MetricSample& b) {
  if (a.name != b.name || a.step != b.step) return false;
  if (std::isnan(a.value)) return std::isnan(b.value);
  return a.value == b.value;
}

// Copies s into *out without ANSI escape sequences (CSI "ESC [ ... final",
// OSC "ESC ] ... BEL or ESC \", and two-byte escapes) and backspaces.
void StripControls(std::string_view s, std::string* out) {
  out->clear();
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\b') continue;
    if (c != '\x1b') {
      out->push_back(c);
      continue;
    }
    if (i + 1 >= s.size()) break;
    char kind = s[++i];
    if (kind == '[') {
      ++i;
      while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
    } else if (kind == ']') {
      ++i;
      while (i < s.size() && s[i] != '\a' &&
             !(s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '\\')) {
        ++i;
      }
      if (i < s.size() && s[i] == '\x1b') ++i;
    }
  }
}

// Whether the line could hold a metric at all: a separator ('=' ':' '|'
// '/'), and a digit or a non-finite word. Most log lines stop here.
bool MayHoldMetric(std::string_view line, bool table_rows) {
  Bytes16 seps = {}, digits = {};
  size_t i = 0;
  for (; i + 16 <= line.size(); i += 16) {
    Bytes16 v;
    std::memcpy(&v, line.data() + i, 16);
    seps |= reinterpret_cast<Bytes16>((v == '=') | (v == ':') | (v == '|') | (v == '/'));
    digits |= reinterpret_cast<Bytes16>(static_cast<Bytes16>(v - '0') < 10);
    if (AnyByte(seps) && AnyByte(digits)) return true;
  }
  bool sep = AnyByte(seps), digit = AnyByte(digits);
  for (; i < line.size(); ++i) {
    uint8_t c = ClassOf(line[i]);
    sep = sep || (c & kSepBit);
    digit = digit || (c & kDigitBit);
  }
  if (!sep) return table_rows && digit;  // YOLO's "all 128 929 ..."
  if (digit) return true;
  for (size_t k = 0; k + 3 <= line.size(); ++k) {
    char c = Lower(line[k]);
    if ((c == 'n' || c == 'i') &&
        (EqualsLower(line.substr(k, 3), "nan") || EqualsLower(line.substr(k, 3), "inf"))) {
      return true;
    }
  }
  return false;
}

// Python repr's rule for where scientific notation starts, without its
// trailing ".0": 100, 0.0001, 1e-05, 1e+16.
void AppendShortest(std::string* out, double v) {
  if (std::isnan(v)) {
    out->append("\"nan\"");
    return;
  }
  if (std::isinf(v)) {
    out->append(v > 0 ? "\"inf\"" : "\"-inf\"");
    return;
  }
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));
  size_t e = sci.find('e');
  std::string_view mantissa = sci.substr(0, e);
  int exp = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+'), sci.data() + sci.size(), exp);
  bool negative = !mantissa.empty() && mantissa[0] == '-';
  std::string digits;
  for (char c : mantissa) {
    if (IsDigit(c)) digits.push_back(c);
  }
  if (negative) out->push_back('-');
  if (exp < -4 || exp >= 16) {
    out->push_back(digits[0]);
    if (digits.size() > 1) {
      out->push_back('.');
      out->append(digits, 1);
    }
    out->push_back('e');
    out->push_back(exp < 0 ? '-' : '+');
    int a = exp < 0 ? -exp : exp;
    if (a < 10) out->push_back('0');
    out->append(std::to_string(a));
    return;
  }
  if (exp < 0) {
    out->append("0.");
    out->append(static_cast<size_t>(-exp - 1), '0');
    out->append(digits);
    return;
  }
  size_t int_len = static_cast<size_t>(exp) + 1;
  if (digits.size() <= int_len) {
    out->append(digits);
    out->append(int_len - digits.size(), '0');
    return;
  }
  out->append(digits, 0, int_len);
  out->push_back('.');
  out->append(digits, int_len);
}

}  // namespace

std::string CanonicalMetricName(std::string_view key) {
  char buf[kMaxNameLen];
  std::string_view lower;
  if (!LowerKey(key, buf, &lower)) return std::string(key);
  std::string_view canonical = CanonicalOfLower(lower);
  return canonical.empty() ? std::string(key) : std::string(canonical);
}

void LogMetricExtractor::Extract(std::string_view line, std::vector<MetricSample>* out) {
  if (!MayHoldMetric(line, !val_columns_.empty()) && !TableHeader(line)) return;
  LineBytes bytes;
  ScanLineBytes(line, &bytes);
  std::string_view text = line;
  if (bytes.controls) {
    StripControls(line, &clean_);
    text = clean_;
  }
  if (!bytes.cr) {
    // One update, the common case: the parser appends straight to *out.
    if (Trim(text).empty()) return;
    SegmentParser(text, bytes, !bytes.controls, &names_, &key_memo_, &train_columns_, &val_columns_)
        .Parse(out);
    return;
  }
  // Several updates: each is parsed into *out, then what repeats a sample of
  // the previous update that gave any is taken out again.
  previous_.clear();
  size_t b = 0;
  while (b <= text.size()) {
    size_t e = text.find('\r', b);
    if (e == std::string_view::npos) e = text.size();
    std::string_view segment = text.substr(b, e - b);
    b = e + 1;
    if (Trim(segment).empty()) continue;
    size_t first = out->size();
    SegmentParser(segment, bytes, false, &names_, &key_memo_, &train_columns_, &val_columns_)
        .Parse(out);
    if (out->size() == first) continue;
    bool last = b > text.size();
    if (!last) segment_.assign(out->begin() + static_cast<std::ptrdiff_t>(first), out->end());
    auto repeated = [&](const MetricSample& sample) {
      return std::any_of(previous_.begin(), previous_.end(),
                         [&](const MetricSample& p) { return SameSample(p, sample); });
    };
    out->erase(
        std::remove_if(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(), repeated),
        out->end());
    if (!last) std::swap(previous_, segment_);
  }
}

std::string MetricSampleJson(int64_t line, const MetricSample& sample,
                             std::string_view position_key) {
  std::string out = "{";
  AppendJsonString(&out, position_key);
  out.append(": ");
  out.append(std::to_string(line));
  out.append(", \"metric\": ");
  AppendJsonString(&out, sample.name);
  out.append(", \"value\": ");
  AppendShortest(&out, sample.value);
  if (sample.step) {
    out.append(", \"step\": ");
    out.append(std::to_string(*sample.step));
  }
  out.push_back('}');
  return out;
}

std::string TrainingSeriesName(std::string_view metric) {
  std::string out(kTrainingMetricPrefix);
  for (char c : metric) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == ':';
    char m = ok ? c : '_';
    if (m == '_' && out.back() == '_') continue;  // "a / b" -> a_b, not a___b
    out.push_back(m);
  }
  while (out.size() > kTrainingMetricPrefix.size() && out.back() == '_') out.pop_back();
  return out;
}

}  // namespace vigil::collect::training

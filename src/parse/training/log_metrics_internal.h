// Private to the training-metric extractor (log_metrics.h): what its files
// share. Not part of the public API; include it only from
// log_metrics*.cc.
//
// A physical line goes LogMetricExtractor::Extract (log_metrics.cc: the
// quick rejection, ANSI escapes, '\r' progress updates) -> a SegmentParser
// per update, whose Parse runs the scans of each family of forms, each
// adding Candidates, and whose Finish gates and orders them into samples:
//   log_metrics_pairs.cc       key=value, key: value, Python dicts, JSON,
//                              "key is value" (the generic forms)
//   log_metrics_progress.cc    tqdm / Lightning and Keras progress bars
//   log_metrics_frameworks.cc  counter heads ("iter 100:", "Epoch 3/10") and
//                              the cells after them (nanoGPT, Megatron,
//                              PyTorch examples), YOLO tables, MMEngine
// They share the vocabulary of keys and values:
//   log_metrics_names.cc       key names: canonical, blocked, metric-looking
//   log_metrics_values.cc      numbers and the units glued to them
// and the byte-level helpers below, inline as they run for every byte.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parse/training/log_metrics.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Hidden: these are the library's own, so under -fPIC the compiler may
// bind them locally (a table read without the GOT, calls known not to be
// interposed), as when they were file-local.
#pragma GCC visibility push(hidden)

namespace vigil::parse::training::internal {

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
inline constexpr std::array<uint8_t, 256> kClass = MakeClasses();
inline uint8_t ClassOf(char c) { return kClass[static_cast<unsigned char>(c)]; }
inline bool IsDigit(char c) { return ClassOf(c) & kDigitBit; }
inline bool IsAlpha(char c) { return ClassOf(c) & kAlphaBit; }
inline bool IsKeyChar(char c) { return ClassOf(c) & kKeyBit; }
inline bool IsWordChar(char c) { return IsAlpha(c) || IsDigit(c) || c == '_'; }
inline bool IsSpace(char c) { return c == ' ' || c == '\t'; }
inline char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

inline bool EqualsLower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    if (Lower(s[i]) != lower[i]) return false;
  }
  return true;
}

inline bool StartsWithLower(std::string_view s, std::string_view lower) {
  return s.size() >= lower.size() && EqualsLower(s.substr(0, lower.size()), lower);
}

inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Sixteen bytes at a time with GCC/Clang vector extensions (SSE2 on x86,
// NEON on Arm): most lines are rejected by this scan alone, and the scans of
// a line that may hold metrics visit only the bytes that can start something
// (a separator, a counter word) instead of testing every byte in turn.
using Bytes16 = uint8_t __attribute__((vector_size(16)));
inline bool AnyByte(Bytes16 mask) {
  uint64_t half[2];
  std::memcpy(half, &mask, 16);
  return (half[0] | half[1]) != 0;
}

// s[i..i+16), zero-padded past the end (no byte searched for is NUL).
inline Bytes16 Load16(std::string_view s, size_t i) {
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
inline uint32_t BitMask(V match) {
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
  bool tab = false;       // cells between tabs
  bool wide = false;      // a byte >= 0x80: maybe a box drawn with U+2502
  size_t blocks = 0;      // of pair_bits and head_bits
  uint32_t pair_bits[kMaxBlocks];
  uint32_t head_bits[kMaxBlocks];
};

// The gates of the scans that read words, not separators (log_metrics.cc):
// letters that begin a training metric's name ("lo"ss, "lr", "le"arning,
// "no"rm) and a phase's or an output's (e"va"l, "va"lid, t"es"t, Caffe's
// "net o"ut"put #0"), any case.
inline constexpr std::string_view kMetricPairs = "lolrleno";
inline constexpr std::string_view kPhasePairs = "vaesut";
bool LetterPairs(std::string_view s, std::string_view pairs);

// The whole number a line starts with, after spaces (Keras' "100/100 [...]",
// Darknet's "2267: ..."): *at is where its digits start, *n its value (at
// most 15 digits); returns the index after them, == *at when there is none.
inline size_t LeadingCount(std::string_view s, size_t* at, int64_t* n) {
  size_t i = 0;
  while (i < s.size() && IsSpace(s[i])) ++i;
  *at = i;
  *n = 0;
  while (i < s.size() && IsDigit(s[i]) && i - *at < 15) *n = *n * 10 + (s[i++] - '0');
  return i;
}

// ---------------------------------------------------------------------------
// Key names (log_metrics_names.cc).

// The key in lower case with ' ' and '-' as '_', in buf; false when it
// does not fit (no metric key is that long).
constexpr size_t kMaxNameLen = 192;
bool LowerKey(std::string_view key, char (&buf)[kMaxNameLen], std::string_view* lower);

// The canonical name of a key already in lower case ("lr" ->
// "learning_rate", "train_loss" -> "loss"), or empty when it has none.
// *rank says how directly the key names it: 0 the plain name ("loss"), 1 a
// second name ("total_loss"), 2-3 a name behind qualifiers ("train_loss",
// "reduced_train_loss"); on a line with several, the lowest rank is kept.
std::string_view CanonicalOfLower(std::string_view k, uint8_t* rank);
std::string_view CanonicalOfLower(std::string_view k);

// The keys seen lately with what was worked out about them: see
// KeyFactsOf in log_metrics_names.cc.
using KeyMemoSlots = std::vector<std::pair<std::string, uint8_t>>;

// A key's name is the segment's own bytes when it is written as one token
// (most keys), else it is written into the segment's name arena (a string
// the extractor keeps, so a warm extractor allocates nothing for it).
struct Key {
  size_t off = 0, len = 0;  // as written, words joined with '_'
  bool in_line = false;     // off is in the segment, not the arena
  bool multi_word = false;
};

// Appends `words` to out[start..] with each run of separators as one '_':
// "learning rate" → learning_rate. In a unit ("TFLOP/s/GPU") '/' and '.'
// separate too.
void AppendNormalized(std::string* out, size_t start, std::string_view words, bool unit);

// ---------------------------------------------------------------------------
// Values (log_metrics_values.cc).

// A decimal number at s[i]: [+-] digits [. digits] [e[+-]digits], or a
// non-finite word. *end is the first byte after it.
bool ParseNumber(std::string_view s, size_t i, double* v, size_t* end);

enum class UnitKind { kNone, kStripped, kRate, kInverseRate, kUnknown };

struct Unit {
  UnitKind kind = UnitKind::kNone;
  std::string_view rate_name;  // canonical name for a rate unit
  size_t end = 0;
};

// What a unit written right after a number means. Times, sizes and
// percentages are dropped (the value is kept as written); a rate names the
// value; anything else means the token was not a plain number ("3rd").
Unit ClassifyUnit(std::string_view u);

inline bool IsUnitChar(char c) {
  return IsAlpha(c) || c == '%' || c == '/' || c == '\xc2' || c == '\xb5';
}

// The unit glued to a number at s[i] ("123.45ms", "12.3%", "19.61it/s").
Unit ReadUnit(std::string_view s, size_t i);

// ---------------------------------------------------------------------------
// Framework line formats (log_metrics_frameworks.cc).

// YOLO's training table header "      Epoch    GPU_mem   box_loss ..." has
// neither digits nor separators; its first word is enough to look closer.
bool TableHeader(std::string_view line);

// ---------------------------------------------------------------------------
// One '\r'-separated progress update: a SegmentParser reads it, each scan
// adding Candidates, and Finish makes samples of them.

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
  uint8_t alias_rank;  // of a canonical key (CanonicalOfLower)

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
  // The segment is a member line of a multi-line JSON record (the
  // extractor tracks the containers): its pair needs no gate.
  void MarkRecordMember() { structured_ = true; }

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
  std::string_view Name(const Candidate& c) const {
    if (c.fixed_len > 0) return std::string_view(c.fixed, c.fixed_len);
    return Written(c);
  }
  // The key as the line wrote it (normalised), whatever it is reported as.
  std::string_view Written(const Candidate& c) const {
    if (c.name_len == 0) return std::string_view(c.fixed, c.fixed_len);
    return (c.name_in_line ? s_ : std::string_view(*arena_)).substr(c.name_off, c.name_len);
  }
  // log_metrics.cc: of the kept candidates reported under one canonical
  // name, the one whose key names it most directly keeps it; the others go
  // by the names they were written with.
  void KeepBestNamed();
  // "val_loss", "test_loss", ... when a phase word stands before s_[pos];
  // "output_loss" for one of Caffe's per-output losses.
  std::string_view PhaseLossBefore(size_t pos) const;

  // log_metrics_names.cc.
  // Adds a keyed value under its canonical name; false when the key is
  // blocked or a step that is not a whole number.
  bool AddKeyed(size_t pos, const Key& key, double value, Source source);
  // log_metrics_pairs.cc. PairAt and PairIs are defined there, inline in
  // their one caller, ScanPairs.
  void ScanPairs();
  inline bool PairAt(size_t sep);
  inline bool PairIs(size_t at);
  bool PairTuple(size_t open);
  bool JoinedNames(size_t sep, size_t value_begin);
  void QualifyByGroup(Key* key);
  // log_metrics_frameworks.cc. ReadHead and CellPair are defined there,
  // inline in their one callers, ScanHeads and ScanCells; ReadHead runs for
  // every word that may be a counter, so it is forced in.
  void ScanHeads();
  [[gnu::always_inline]] inline size_t ReadHead(size_t i, size_t first_text);
  void ScanCells(std::string_view region, size_t offset, std::string_view delim);
  // A cell's name and its value at value_pos (CellPair, two-column rows).
  bool KeyedCell(std::string_view head, size_t words, size_t value_pos, double v);
  inline bool CellPair(std::string_view cell, size_t offset);
  void ScanMMEngine();
  void ScanMessageTail();
  void ScanWordRuns();
  void ScanDarknet();
  bool ScanYolo(std::string_view text, size_t offset, bool* training_row);
  // log_metrics_progress.cc
  void ScanTqdm();
  void ScanKeras();
  // log_metrics.cc
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
  int named_groups_ = -1;                       // a "name[" in the segment: -1 not looked yet
  int spaced_colons_ = 0;                       // " : " seen by ScanPairs (Marian's cells)
  size_t head_colon_ = std::string_view::npos;  // "iter 100:" → cells after
  size_t tqdm_begin_ = std::string_view::npos;  // a tqdm bar: "42%|███| 4/8 "
  size_t tqdm_end_ = 0;
};

}  // namespace vigil::parse::training::internal

#pragma GCC visibility pop

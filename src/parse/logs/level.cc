#include "parse/logs/level.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace vigil::parse::logs {
namespace {

using wire::LogLevel;

// Character classes by table: the token scan below touches every byte of
// the line's head, so one load per byte matters.
constexpr uint8_t kWordBit = 1, kAlphaBit = 2, kUpperBit = 4, kDigitBit = 8, kLevelStartBit = 16;
constexpr std::array<uint8_t, 256> MakeClasses() {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) {
    if (c >= 'A' && c <= 'Z') t[c] = kWordBit | kAlphaBit | kUpperBit;
    if (c >= 'a' && c <= 'z') t[c] = kWordBit | kAlphaBit;
    if (c >= '0' && c <= '9') t[c] = kWordBit | kDigitBit;
    if (c == '_') t[c] = kWordBit;
    // First letters of level names (LevelFromWord) and logfmt keys.
    for (char l : std::string_view("tdfinwescpalTDFINWESCPAL")) {
      if (c == l) t[c] |= kLevelStartBit;
    }
  }
  return t;
}
constexpr std::array<uint8_t, 256> kClass = MakeClasses();
uint8_t ClassOf(char c) { return kClass[static_cast<unsigned char>(c)]; }

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool IsUpper(char c) { return ClassOf(c) & kUpperBit; }
bool IsAlpha(char c) { return ClassOf(c) & kAlphaBit; }
bool IsDigit(char c) { return ClassOf(c) & kDigitBit; }
bool IsWord(char c) { return ClassOf(c) & kWordBit; }

// Up to 8 lower-case letters packed little-endian into one integer.
constexpr uint64_t Pack(std::string_view s) {
  uint64_t k = 0;
  for (size_t i = 0; i < s.size() && i < 8; ++i) {
    k |= static_cast<uint64_t>(static_cast<unsigned char>(s[i])) << (8 * i);
  }
  return k;
}

bool EqualsLower(std::string_view word, std::string_view lower) {
  if (word.size() != lower.size()) return false;
  for (size_t i = 0; i < word.size(); ++i) {
    if (Lower(word[i]) != lower[i]) return false;
  }
  return true;
}

bool AllUpper(std::string_view w) {
  for (char c : w) {
    if (!IsUpper(c)) return false;
  }
  return !w.empty();
}

// Copies up to `max` bytes of the first line into buf without ANSI escape
// sequences: colored console loggers wrap the level in them.
size_t StripAnsi(std::string_view s, char* buf, size_t max) {
  size_t n = 0;
  for (size_t i = 0; i < s.size() && n < max; ++i) {
    char c = s[i];
    if (c == '\n') break;
    if (c == '\x1b') {
      ++i;
      if (i < s.size() && s[i] == '[') {
        ++i;
        while (i < s.size() && !(s[i] >= 0x40 && s[i] <= 0x7e)) ++i;
      }
      continue;
    }
    buf[n++] = c;
  }
  return n;
}

// Reads a level value after "key" ':' (JSON) or '=' (logfmt): a quoted or
// bare word, or a pino/bunyan number (10..60).
bool ValueLevel(std::string_view s, size_t i, LogLevel* level) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  bool quoted = i < s.size() && s[i] == '"';
  if (quoted) ++i;
  size_t b = i;
  while (i < s.size() && (IsAlpha(s[i]) || IsDigit(s[i]))) ++i;
  std::string_view v = s.substr(b, i - b);
  if (!v.empty() && IsDigit(v[0]) && !quoted) {
    int n = 0;
    for (char c : v) {
      if (!IsDigit(c) || n > 100) return false;
      n = n * 10 + (c - '0');
    }
    static const LogLevel kPino[] = {LogLevel::kTrace, LogLevel::kDebug, LogLevel::kInfo,
                                     LogLevel::kWarn,  LogLevel::kError, LogLevel::kFatal};
    if (n < 10 || n > 60 || n % 10 != 0) return false;
    *level = kPino[n / 10 - 1];
    return true;
  }
  return LevelFromWord(v, level);
}

// The first line of `line`, as far as its first 2048 bytes.
LogLevel JsonLevel(std::string_view line) {
  std::string_view s = line.substr(0, 2048);
  s = s.substr(0, s.find('\n'));
  static constexpr std::string_view kKeys[] = {"level\"", "severity\"",  "levelname\"",
                                               "lvl\"",   "log.level\"", "loglevel\""};
  constexpr size_t kKeyCount = std::size(kKeys);
  // One pass over the quotes finds where each key first appears (many lines
  // that start with '{' are Python dicts without a double quote: one memchr).
  // Keys are then tried in their order of preference.
  size_t first[kKeyCount];
  std::fill(std::begin(first), std::end(first), std::string_view::npos);
  for (size_t q = s.find('"'); q != std::string_view::npos; q = s.find('"', q + 1)) {
    std::string_view rest = s.substr(q + 1);
    for (size_t k = 0; k < kKeyCount; ++k) {
      if (first[k] == std::string_view::npos && rest.starts_with(kKeys[k])) {
        first[k] = q + 1 + kKeys[k].size();
      }
    }
  }
  for (size_t k = 0; k < kKeyCount; ++k) {
    size_t i = first[k];
    if (i == std::string_view::npos) continue;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size() || s[i] != ':') continue;
    LogLevel level;
    if (ValueLevel(s, i + 1, &level)) return level;
  }
  return LogLevel::kUnknown;
}

bool GlogLetter(char c, LogLevel* level) {
  switch (c) {
    case 'I':
      *level = LogLevel::kInfo;
      return true;
    case 'W':
      *level = LogLevel::kWarn;
      return true;
    case 'E':
      *level = LogLevel::kError;
      return true;
    case 'F':
      *level = LogLevel::kFatal;
      return true;
    default:
      return false;
  }
}

// glog/absl/klog: one of IWEF, MMDD, a space, then the time.
bool GlogLevel(std::string_view s, LogLevel* level) {
  if (s.size() < 8 || !IsDigit(s[1]) || !IsDigit(s[2]) || !IsDigit(s[3]) || !IsDigit(s[4]) ||
      s[5] != ' ' || !IsDigit(s[6])) {
    return false;
  }
  return GlogLetter(s[0], level);
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The line's first token when it is a (dotted) exception or warning class:
// "ValueError: x", "torch.cuda.OutOfMemoryError: ...", "KeyboardInterrupt".
bool ExceptionStart(std::string_view s, LogLevel* level) {
  // Lines that start with a timestamp or a bracket are out before the scan.
  if (s.empty() || !IsAlpha(s[0])) return false;
  size_t i = 0;
  while (i < s.size() && (IsWord(s[i]) || s[i] == '.' || s[i] == '$')) ++i;
  std::string_view name = s.substr(0, i);
  bool colon = i < s.size() && s[i] == ':';
  if (!colon && i != s.size()) return false;
  if (EndsWith(name, "Error") || EndsWith(name, "Exception") || name == "KeyboardInterrupt") {
    *level = LogLevel::kError;
    return true;
  }
  if (colon && EndsWith(name, "Warning")) {
    *level = LogLevel::kWarn;
    return true;
  }
  return false;
}

// A line's head (at most 128 bytes) as bit masks, one bit per byte. With
// them the token scan below visits only the words that begin with a letter
// (the only ones that can name a level) instead of testing every byte, and
// mispredicting at every word's edges, on every line. (__int128: GCC and
// Clang on 64-bit targets, which is where the agent runs.)
using Bits128 = unsigned __int128;
static_assert(kLevelScanBytes <= 128);

// Trailing zero bits; 128 for 0 (a head of 128 word bytes has no end bit).
size_t Ctz128(Bits128 b) {
  const auto lo = static_cast<uint64_t>(b);
  const auto hi = static_cast<uint64_t>(b >> 64);
  if (lo != 0) return static_cast<size_t>(__builtin_ctzll(lo));
  return hi != 0 ? 64 + static_cast<size_t>(__builtin_ctzll(hi)) : 128;
}

struct HeadClasses {
  Bits128 word = 0;    // [A-Za-z0-9_], as IsWord
  Bits128 letter = 0;  // [A-Za-z], as IsAlpha
};

HeadClasses ClassifyHead(std::string_view s) {
  HeadClasses out;
  const size_t n = std::min(s.size(), kLevelScanBytes);
#ifdef __SSE2__
  // 16 bits per block, gathered in order and copied into the masks as a
  // whole (x86 is little-endian): cheaper than 128-bit shifts by i.
  uint16_t words[8] = {}, letters[8] = {};
  for (size_t i = 0; i < n; i += 16) {
    char tail[16] = {};  // zeros are in no class
    const char* p = s.data() + i;
    if (n - i < 16) p = static_cast<const char*>(memcpy(tail, p, n - i));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Signed compares leave bytes >= 0x80 (negative) out of every range.
    const __m128i folded = _mm_or_si128(c, _mm_set1_epi8(0x20));  // A-Z -> a-z
    const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)),
                                         _mm_cmplt_epi8(folded, _mm_set1_epi8('z' + 1)));
    const __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('0' - 1)),
                                        _mm_cmplt_epi8(c, _mm_set1_epi8('9' + 1)));
    const __m128i word =
        _mm_or_si128(_mm_or_si128(letter, digit), _mm_cmpeq_epi8(c, _mm_set1_epi8('_')));
    words[i / 16] = static_cast<uint16_t>(_mm_movemask_epi8(word));
    letters[i / 16] = static_cast<uint16_t>(_mm_movemask_epi8(letter));
  }
  static_assert(sizeof(words) == sizeof(Bits128));
  memcpy(&out.word, words, sizeof(words));
  memcpy(&out.letter, letters, sizeof(letters));
#else
  for (size_t i = 0; i < n; ++i) {
    out.word |= static_cast<Bits128>(IsWord(s[i])) << i;
    out.letter |= static_cast<Bits128>(IsAlpha(s[i])) << i;
  }
#endif
  return out;
}

}  // namespace

// "[rank0]: " / "[default3]:": torchrun and DeepSpeed's launcher prefix
// each worker's lines.
namespace {

// Ray's "(Name pid=N, ip=A) " / "(pid=N) " (python/ray/_private/log_monitor.py).
size_t RayPrefixLen(std::string_view s) {
  constexpr size_t kMax = 96;
  size_t i = 1;
  while (i < s.size() && i < 48 &&
         (IsAlpha(s[i]) || IsDigit(s[i]) || s[i] == '_' || s[i] == ':' || s[i] == '.'))
    ++i;
  if (i < s.size() && s[i] == '=') i = 1;  // "(pid=600)": no name
  if (i > 1) {
    if (i >= s.size() || s[i] != ' ') return 0;
    ++i;
  }
  if (s.substr(i, 4) != "pid=") return 0;
  i += 4;
  size_t digits = i;
  while (i < s.size() && IsDigit(s[i])) ++i;
  if (i == digits) return 0;
  if (s.substr(i, 5) == ", ip=") {
    i += 5;
    while (i < s.size() && i < kMax &&
           (IsDigit(s[i]) || IsAlpha(s[i]) || s[i] == '.' || s[i] == ':'))
      ++i;
  }
  if (i + 1 >= s.size() || s[i] != ')' || s[i + 1] != ' ') return 0;
  return i + 2;
}

}  // namespace

size_t WorkerPrefixLen(std::string_view s) {
  if (s.size() >= 8 && s[0] == '(') return RayPrefixLen(s);
  if (s.size() < 4 || s[0] != '[') return 0;
  size_t i = 1;
  while (i < s.size() && i < 24 && IsAlpha(s[i])) ++i;
  size_t letters = i - 1;
  while (i < s.size() && i < 24 && IsDigit(s[i])) ++i;
  if (letters == 0 || i == letters + 1 || i + 1 >= s.size() || s[i] != ']' || s[i + 1] != ':') {
    return 0;
  }
  i += 2;
  if (i < s.size() && s[i] == ' ') ++i;
  return i;
}

bool LevelFromWord(std::string_view w, LogLevel* level) {
  if (w.size() < 3 || w.size() > 8) return false;
  uint64_t key = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    if (!IsAlpha(w[i])) return false;
    key |= static_cast<uint64_t>(static_cast<unsigned char>(Lower(w[i]))) << (8 * i);
  }
  // One switch over packed names instead of string compares: this runs for
  // many words of every line.
  switch (key) {
    case Pack("trace"):
    case Pack("trc"):
    case Pack("finest"):
      *level = LogLevel::kTrace;
      return true;
    case Pack("debug"):
    case Pack("dbg"):
    case Pack("fine"):
    case Pack("finer"):
      *level = LogLevel::kDebug;
      return true;
    case Pack("info"):
    case Pack("inf"):
    case Pack("notice"):
      *level = LogLevel::kInfo;
      return true;
    case Pack("warn"):
    case Pack("warning"):
    case Pack("wrn"):
      *level = LogLevel::kWarn;
      return true;
    case Pack("error"):
    case Pack("err"):
    case Pack("eror"):
    case Pack("severe"):
      *level = LogLevel::kError;
      return true;
    case Pack("fatal"):
    case Pack("ftl"):
    case Pack("critical"):
    case Pack("crit"):
    case Pack("panic"):
    case Pack("emerg"):
    case Pack("alert"):
      *level = LogLevel::kFatal;
      return true;
    default:
      return false;
  }
}

LogLevel DetectLevel(std::string_view line) {
  size_t start = 0;
  while (start < line.size() && (line[start] == ' ' || line[start] == '\t')) ++start;
  line.remove_prefix(start);
  if (line.empty()) return LogLevel::kUnknown;
  if (line[0] == '{') return JsonLevel(line);

  char buf[kLevelScanBytes];
  std::string_view s;
  if (memchr(line.data(), '\x1b', std::min(line.size(), kLevelScanBytes)) != nullptr) {
    s = std::string_view(buf, StripAnsi(line, buf, kLevelScanBytes));
  } else {
    // Only the head is searched for the end of the first line: a long line
    // has none, and a record's later lines do not matter.
    s = line.substr(0, kLevelScanBytes);
    s = s.substr(0, s.find('\n'));
  }

  LogLevel level;
  if (GlogLevel(s, &level)) return level;
  // c10 (PyTorch C++): "[W socket.cpp:663] ..." and "[W1129 10:00:00.1 ...]".
  if (s.size() > 3 && s[0] == '[') {
    if (s[2] == ' ' && GlogLetter(s[1], &level)) return level;
    if (GlogLevel(s.substr(1), &level)) return level;
  }
  s.remove_prefix(WorkerPrefixLen(s));
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  if (s.starts_with("Traceback (most recent call last)") || s.starts_with("Exception in thread")) {
    return LogLevel::kError;
  }
  if (ExceptionStart(s, &level)) return level;

  // Tokens are maximal runs of word bytes; those that begin with a digit or
  // '_' are skipped.
  bool first_word = true;
  const HeadClasses head = ClassifyHead(s);
  for (Bits128 starts = head.letter & ~(head.word << 1); starts != 0; starts &= starts - 1) {
    const size_t b = Ctz128(starts);
    const size_t i = b + Ctz128(~(head.word >> b));  // bits past the head are 0
    std::string_view w = s.substr(b, i - b);
    char prev = b > 0 ? s[b - 1] : ' ';
    char next = i < s.size() ? s[i] : ' ';
    bool was_first = first_word;
    first_word = false;
    // Fast reject: no level name starts with this letter, and it is not a
    // key (logfmt) or a "XxxWarning:".
    if (!(ClassOf(w[0]) & kLevelStartBit) && next != ':' && next != '=') continue;
    // Every level name, logfmt key and "XxxWarning" has 3 letters or more.
    if (w.size() < 3) continue;

    // logfmt: level=warn, lvl="error".
    if (next == '=' && (EqualsLower(w, "level") || EqualsLower(w, "lvl") ||
                        EqualsLower(w, "severity") || EqualsLower(w, "loglevel"))) {
      if (ValueLevel(s, i + 1, &level)) return level;
      continue;
    }
    if (!LevelFromWord(w, &level)) {
      // "/x.py:3: UserWarning: msg" (Python's warnings module).
      if (next == ':' && w.size() > 7 && EndsWith(w, "Warning")) return LogLevel::kWarn;
      continue;
    }
    // "key=INFO" is a value of some other setting (NCCL_DEBUG=INFO).
    if (prev == '=' || prev == '.' || prev == '/' || next == '=' || next == '.' || next == '/') {
      continue;
    }
    if (AllUpper(w)) return level;
    bool bracketed = (prev == '[' || prev == '<' || prev == '(') &&
                     (next == ']' || next == '>' || next == ')' || next == '|');
    if (bracketed) return level;
    // "Error: ...", "error: ...", "warning: ..." as the first word (Go, Rust,
    // compilers, git).
    if (was_first && next == ':') return level;
  }
  return LogLevel::kUnknown;
}

}  // namespace vigil::parse::logs

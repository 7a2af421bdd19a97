#include "parse/logs/encoding.h"

#include <iconv.h>
#include <uchardet.h>

#include <cerrno>
#include <cstring>
#include <utility>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "wire/log_batch.h"

namespace vigil::parse::logs {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid;
// *consumed is the maximal invalid subpart to replace with one U+FFFD.
size_t SequenceAt(const unsigned char* s, size_t n, size_t i, size_t* consumed) {
  unsigned char c = s[i];
  if (c < 0x80) return 1;
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // past U+10FFFF
  } else {
    *consumed = 1;
    return 0;
  }
  size_t k = 1;
  for (; k < len; ++k) {
    if (i + k >= n) break;
    unsigned char d = s[i + k];
    if (k == 1 ? (d < lo || d > hi) : (d < 0x80 || d > 0xBF)) break;
  }
  if (k == len) return len;
  *consumed = k;
  return 0;
}

// Index of the first byte >= 0x80 at or after `i`, or n. Every line of
// every source passes here and nearly all of it is ASCII: 64 and then 16
// bytes per step with SSE2 (any x86-64), 8 otherwise.
size_t SkipAscii(const unsigned char* p, size_t n, size_t i) {
#ifdef __SSE2__
  auto load = [p](size_t at) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at)); };
  // 64 bytes per test; the 16-byte steps below find the high byte.
  for (; i + 64 <= n; i += 64) {
    __m128i any =
        _mm_or_si128(_mm_or_si128(load(i), load(i + 16)), _mm_or_si128(load(i + 32), load(i + 48)));
    if (_mm_movemask_epi8(any) != 0) break;
  }
  for (; i + 16 <= n; i += 16) {
    int high = _mm_movemask_epi8(load(i));
    if (high != 0) return i + static_cast<size_t>(__builtin_ctz(high));
  }
  if (i < n && n >= 16) {
    // The last 16 bytes in one load, overlapping what was checked; the shift
    // keeps the bits of [i, n).
    int high = _mm_movemask_epi8(load(n - 16)) >> (16 - (n - i));
    return high != 0 ? i + static_cast<size_t>(__builtin_ctz(high)) : n;
  }
#endif
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    if (w & 0x8080808080808080ull) break;  // the byte loop below finds which
  }
  while (i < n && p[i] < 0x80) ++i;
  return i;
}

struct Utf8Shape {
  size_t long_sequences = 0;  // valid 3- and 4-byte sequences
  size_t invalid = 0;         // invalid subparts
  bool only_tail_invalid = false;
};

Utf8Shape ShapeOf(std::string_view s) {
  Utf8Shape shape;
  auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = 0;
  size_t last_invalid_end = 0;
  while (i < s.size()) {
    size_t consumed = 0;
    size_t len = SequenceAt(p, s.size(), i, &consumed);
    if (len == 0) {
      ++shape.invalid;
      i += consumed;
      last_invalid_end = i;
      continue;
    }
    if (len >= 3) ++shape.long_sequences;
    i += len;
  }
  // An incomplete sequence cut off at the end (a line split at a size cap)
  // is damage, not a different charset.
  shape.only_tail_invalid = shape.invalid == 1 && last_invalid_end == s.size() &&
                            static_cast<unsigned char>(s.back()) >= 0x80;
  return shape;
}

// Maps uchardet's names to the iconv charset that decodes them best; ""
// for answers that are no use for a line that is not UTF-8.
std::string IconvName(const char* detected) {
  if (detected == nullptr) return "";
  std::string d(detected);
  for (char& c : d) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  if (d.empty() || d == "ASCII" || d.starts_with("UTF-") || d == "UTF8") return "";
  // Supersets: what Windows and real tools write under these names.
  if (d == "GB2312" || d == "GBK" || d == "GB18030" || d == "HZ-GB-2312") return "GB18030";
  if (d == "BIG5" || d == "BIG5-HKSCS") return "BIG5-HKSCS";
  if (d == "SHIFT_JIS" || d == "SJIS") return "CP932";
  if (d == "EUC-KR" || d == "UHC") return "CP949";
  if (d == "ISO-8859-1") return "WINDOWS-1252";
  return d;
}

bool IsHigh(unsigned char c) { return c >= 0x80; }

}  // namespace

bool IsValidUtf8(std::string_view s) {
  auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  // Between multi-byte sequences (a progress bar's blocks, CJK text), ASCII
  // runs are skipped in steps as well.
  for (size_t i = SkipAscii(p, n, 0); i < n; i = SkipAscii(p, n, i)) {
    size_t consumed;
    size_t len = SequenceAt(p, n, i, &consumed);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

void AppendSanitizedUtf8(std::string_view s, std::string* out) {
  auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t i = 0;
  size_t run = 0;  // start of the pending valid run
  while (i < s.size()) {
    if (p[i] < 0x80) {
      ++i;
      continue;
    }
    size_t consumed = 0;
    size_t len = SequenceAt(p, s.size(), i, &consumed);
    if (len != 0) {
      i += len;
      continue;
    }
    out->append(s.data() + run, i - run);
    out->append(kReplacement);
    i += consumed;
    run = i;
  }
  out->append(s.data() + run, s.size() - run);
}

std::string GuessCharsetFromBytes(std::string_view sample) {
  auto* p = reinterpret_cast<const unsigned char*>(sample.data());
  size_t pairs = 0, singles = 0, single_letters = 0;
  size_t i = 0;
  while (i < sample.size()) {
    if (!IsHigh(p[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < sample.size() && IsHigh(p[j])) ++j;
    size_t run = j - i;
    if (run >= 2) {
      pairs += run / 2;
    } else {
      ++singles;
      if (p[i] >= 0xC0) ++single_letters;  // accented letters in Latin-1
    }
    i = j;
  }
  if (pairs > 0 && pairs >= singles) return "GB18030";
  if (singles > 0 && single_letters * 2 >= singles) return "WINDOWS-1252";
  return "";
}

EncodingNormalizer::EncodingNormalizer(EncodingOptions options) : options_(std::move(options)) {
  if (!options_.charset.empty()) {
    UseCharset(options_.charset);
    decided_ = true;
  }
}

EncodingNormalizer::~EncodingNormalizer() {
  if (iconv_ != nullptr) iconv_close(static_cast<iconv_t>(iconv_));
  if (detector_ != nullptr) uchardet_delete(static_cast<uchardet_t>(detector_));
}

void EncodingNormalizer::UseCharset(const std::string& name) {
  if (name == charset_ && (iconv_ != nullptr || name.empty())) return;
  if (iconv_ != nullptr) iconv_close(static_cast<iconv_t>(iconv_));
  iconv_ = nullptr;
  charset_.clear();
  if (name.empty()) return;
  iconv_t cd = iconv_open("UTF-8", name.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1)) return;  // unknown to glibc: replace instead
  iconv_ = cd;
  charset_ = name;
}

void EncodingNormalizer::Observe(std::string_view in) {
  size_t room = options_.sample_bytes > sample_.size() ? options_.sample_bytes - sample_.size() : 0;
  sample_.append(in.substr(0, room));
  sample_.push_back('\n');
  size_t high = 0;
  for (unsigned char c : sample_) high += IsHigh(c);

  std::string guess = GuessCharsetFromBytes(sample_);
  std::string detected;
  if (detector_ == nullptr) detector_ = uchardet_new();
  if (auto ud = static_cast<uchardet_t>(detector_); ud != nullptr) {
    uchardet_reset(ud);
    uchardet_handle_data(ud, sample_.data(), sample_.size());
    uchardet_data_end(ud);
    detected = IconvName(uchardet_get_charset(ud));
  }
  // uchardet needs some text to be right; on a few characters the shape of
  // the bytes is the better guess.
  std::string choice = (!detected.empty() && (high >= 64 || guess.empty())) ? detected : guess;
  UseCharset(choice);
  if (sample_.size() >= options_.sample_bytes || high >= 512) {
    decided_ = true;
    sample_.clear();
    sample_.shrink_to_fit();
    // The detector holds tens of KiB of prober state; a decided source
    // needs it no more.
    if (detector_ != nullptr) uchardet_delete(static_cast<uchardet_t>(detector_));
    detector_ = nullptr;
  }
}

void EncodingNormalizer::Convert(std::string_view in) {
  auto cd = static_cast<iconv_t>(iconv_);
  iconv(cd, nullptr, nullptr, nullptr, nullptr);
  out_.resize(in.size() * 4 + 16);
  char* src = const_cast<char*>(in.data());
  size_t src_left = in.size();
  size_t used = 0;
  while (src_left > 0) {
    char* dst = out_.data() + used;
    size_t dst_left = out_.size() - used;
    size_t r = iconv(cd, &src, &src_left, &dst, &dst_left);
    used = out_.size() - dst_left;
    if (r != static_cast<size_t>(-1)) break;
    if (errno == E2BIG) {
      out_.resize(out_.size() * 2);
      continue;
    }
    // EILSEQ: a byte this charset cannot start here; EINVAL: cut off at the
    // end. Either way show the loss and go on after one byte.
    if (out_.size() - used < 8) out_.resize(out_.size() * 2);
    memcpy(out_.data() + used, kReplacement, 3);
    used += 3;
    ++src;
    --src_left;
    iconv(cd, nullptr, nullptr, nullptr, nullptr);
  }
  out_.resize(used);
}

std::string_view EncodingNormalizer::Normalize(std::string_view in, uint8_t* flags) {
  if (IsValidUtf8(in)) return in;
  *flags |= wire::kLogFlagInvalidUtf8;
  ++converted_lines_;
  if (options_.charset.empty()) {
    Utf8Shape shape = ShapeOf(in);
    bool damaged_utf8 = shape.only_tail_invalid ||
                        (shape.long_sequences > 0 && shape.long_sequences >= 4 * shape.invalid);
    if (damaged_utf8) {
      out_.clear();
      AppendSanitizedUtf8(in, &out_);
      return out_;
    }
    if (!decided_) Observe(in);
  }
  if (iconv_ == nullptr) {
    out_.clear();
    AppendSanitizedUtf8(in, &out_);
    return out_;
  }
  Convert(in);
  // glibc's converters emit valid UTF-8, but a charset that maps bytes to
  // C1 controls or lone surrogates would still be safe-guarded here.
  if (!IsValidUtf8(out_)) {
    std::string fixed;
    AppendSanitizedUtf8(out_, &fixed);
    out_.swap(fixed);
  }
  return out_;
}

}  // namespace vigil::parse::logs

// Encoding stage: makes every line valid UTF-8, which is what the wire format
// and the store require.
//
//  * Valid UTF-8 (almost every line) passes through untouched: ASCII runs
//    are skipped many bytes at a time (SSE2), and UTF-8 is validated only
//    where a high byte shows.
//  * Otherwise the source's charset is detected once (uchardet on a sample
//    of its non-UTF-8 lines, with a byte-structure fallback for short
//    samples, where uchardet guesses poorly) and remembered; lines are
//    converted with iconv. Typical sources: GBK/GB18030 (Chinese Windows
//    tools, older Chinese training scripts), Big5, Shift_JIS, Latin-1.
//  * Bytes that still do not convert become U+FFFD, visibly.
// The record gets wire::kLogFlagInvalidUtf8 whenever anything was converted
// or replaced.
//
// Thread safety: an EncodingNormalizer is per source and not thread-safe.
// The free functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vigil::parse::logs {

bool IsValidUtf8(std::string_view s);

// Appends `s` to *out with each invalid UTF-8 sequence (maximal subpart, as
// the Unicode standard recommends) replaced by U+FFFD.
void AppendSanitizedUtf8(std::string_view s, std::string* out);

struct EncodingOptions {
  // An iconv charset name ("GB18030") to use instead of detection; empty to
  // detect.
  std::string charset;
  // Non-UTF-8 bytes collected before the detection is final. Until then each
  // line uses the best guess so far.
  size_t sample_bytes = 4096;
};

class EncodingNormalizer {
 public:
  explicit EncodingNormalizer(EncodingOptions options = {});
  ~EncodingNormalizer();
  EncodingNormalizer(const EncodingNormalizer&) = delete;
  EncodingNormalizer& operator=(const EncodingNormalizer&) = delete;

  // Returns `in` itself when it is valid UTF-8, else a view of an internal
  // buffer (valid until the next call) holding the converted text, and sets
  // wire::kLogFlagInvalidUtf8 in *flags.
  std::string_view Normalize(std::string_view in, uint8_t* flags);

  // The iconv name of the detected (or configured) charset; empty while
  // undecided or when the lines are only damaged UTF-8.
  const std::string& charset() const { return charset_; }
  bool decided() const { return decided_; }
  uint64_t converted_lines() const { return converted_lines_; }

 private:
  void Observe(std::string_view in);
  void UseCharset(const std::string& name);
  void Convert(std::string_view in);

  EncodingOptions options_;
  std::string sample_;
  std::string charset_;
  bool decided_ = false;
  void* iconv_ = nullptr;     // iconv_t; void* keeps <iconv.h> out of the header
  void* detector_ = nullptr;  // uchardet_t, only while undecided
  std::string out_;
  uint64_t converted_lines_ = 0;
};

// The guess used when uchardet has nothing useful to say: "GB18030" when the
// high bytes come in GBK-shaped pairs, "WINDOWS-1252" when they stand alone
// between ASCII letters, "" (replace, do not convert) otherwise.
std::string GuessCharsetFromBytes(std::string_view sample);

}  // namespace vigil::parse::logs

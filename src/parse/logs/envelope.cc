#include "parse/logs/envelope.h"

#include <cstring>

namespace vigil::parse::logs {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads `n` decimal digits at s[*i]; false if any is not a digit.
bool Digits(std::string_view s, size_t* i, int n, int* out) {
  if (*i + n > s.size()) return false;
  int v = 0;
  for (int k = 0; k < n; ++k) {
    char c = s[*i + k];
    if (!IsDigit(c)) return false;
    v = v * 10 + (c - '0');
  }
  *i += n;
  *out = v;
  return true;
}

bool Expect(std::string_view s, size_t* i, char c) {
  if (*i >= s.size() || s[*i] != c) return false;
  ++*i;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil), exact for the whole range we accept.
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static const int kDays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool Hex4(std::string_view s, size_t i, uint32_t* out) {
  if (i + 4 > s.size()) return false;
  uint32_t v = 0;
  for (size_t k = 0; k < 4; ++k) {
    int h = HexValue(s[i + k]);
    if (h < 0) return false;
    v = v << 4 | static_cast<uint32_t>(h);
  }
  *out = v;
  return true;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | cp >> 6));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | cp >> 12));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | cp >> 18));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

void SkipWs(std::string_view s, size_t* i) {
  while (*i < s.size() && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\r' || s[*i] == '\n')) ++*i;
}

// Scans a JSON string starting at s[*i] == '"'. With `out`, appends the
// unescaped value; `raw` receives the bytes between the quotes. Lone
// surrogates become U+FFFD (Docker writes what Go's encoder made of the
// process's bytes, which is always valid, but the file is untrusted).
bool ScanString(std::string_view s, size_t* i, std::string* out, std::string_view* raw) {
  if (*i >= s.size() || s[*i] != '"') return false;
  size_t p = *i + 1;
  const size_t begin = p;
  while (true) {
    // Copy the run up to the next quote or backslash in one go: the common
    // case is a line with only its trailing "\n" escaped.
    const char* base = s.data() + p;
    size_t left = s.size() - p;
    const void* q = memchr(base, '"', left);
    const void* b = memchr(base, '\\', left);
    if (q == nullptr) return false;
    size_t stop = static_cast<const char*>(q) - s.data();
    if (b != nullptr && static_cast<const char*>(b) < static_cast<const char*>(q)) {
      stop = static_cast<const char*>(b) - s.data();
    }
    if (out != nullptr) out->append(s.data() + p, stop - p);
    p = stop;
    if (s[p] == '"') {
      if (raw != nullptr) *raw = s.substr(begin, p - begin);
      *i = p + 1;
      return true;
    }
    if (p + 1 >= s.size()) return false;
    char e = s[p + 1];
    p += 2;
    char c = 0;
    switch (e) {
      case '"':
        c = '"';
        break;
      case '\\':
        c = '\\';
        break;
      case '/':
        c = '/';
        break;
      case 'b':
        c = '\b';
        break;
      case 'f':
        c = '\f';
        break;
      case 'n':
        c = '\n';
        break;
      case 'r':
        c = '\r';
        break;
      case 't':
        c = '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!Hex4(s, p, &cp)) return false;
        p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t lo;
          if (p + 1 < s.size() && s[p] == '\\' && s[p + 1] == 'u' && Hex4(s, p + 2, &lo) &&
              lo >= 0xDC00 && lo <= 0xDFFF) {
            p += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        if (out != nullptr) AppendUtf8(cp, out);
        continue;
      }
      default:
        return false;
    }
    if (out != nullptr) out->push_back(c);
  }
}

// Skips any JSON value; nesting is bounded so a hostile line cannot recurse.
bool SkipValue(std::string_view s, size_t* i) {
  SkipWs(s, i);
  if (*i >= s.size()) return false;
  char c = s[*i];
  if (c == '"') return ScanString(s, i, nullptr, nullptr);
  if (c == '{' || c == '[') {
    int depth = 0;
    while (*i < s.size()) {
      char d = s[*i];
      if (d == '"') {
        if (!ScanString(s, i, nullptr, nullptr)) return false;
        continue;
      }
      if (d == '{' || d == '[') {
        if (++depth > 64) return false;
      } else if (d == '}' || d == ']') {
        if (--depth == 0) {
          ++*i;
          return true;
        }
      }
      ++*i;
    }
    return false;
  }
  size_t start = *i;
  while (*i < s.size() && s[*i] != ',' && s[*i] != '}' && s[*i] != ' ' && s[*i] != '\t') ++*i;
  return *i > start;
}

}  // namespace

std::optional<int64_t> ParseRfc3339Nano(std::string_view s) {
  size_t i = 0;
  int year, month, day, hour, minute, second;
  if (!Digits(s, &i, 4, &year) || !Expect(s, &i, '-') || !Digits(s, &i, 2, &month) ||
      !Expect(s, &i, '-') || !Digits(s, &i, 2, &day)) {
    return std::nullopt;
  }
  if (i >= s.size() || (s[i] != 'T' && s[i] != 't' && s[i] != ' ')) return std::nullopt;
  ++i;
  if (!Digits(s, &i, 2, &hour) || !Expect(s, &i, ':') || !Digits(s, &i, 2, &minute) ||
      !Expect(s, &i, ':') || !Digits(s, &i, 2, &second)) {
    return std::nullopt;
  }
  // Years past 2261 would overflow int64 nanoseconds.
  if (year < 1970 || year > 2261 || month < 1 || month > 12 || day < 1 ||
      day > DaysInMonth(year, month) || hour > 23 || minute > 59 || second > 60) {
    return std::nullopt;
  }
  int64_t nanos = 0;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    ++i;
    int n = 0;
    while (i < s.size() && IsDigit(s[i])) {
      if (n < 9) {
        nanos = nanos * 10 + (s[i] - '0');
        ++n;
      }
      ++i;
    }
    if (n == 0) return std::nullopt;
    for (; n < 9; ++n) nanos *= 10;
  }
  int64_t offset_s = 0;
  if (i >= s.size()) return std::nullopt;
  if (s[i] == 'Z' || s[i] == 'z') {
    ++i;
  } else if (s[i] == '+' || s[i] == '-') {
    int sign = s[i] == '-' ? -1 : 1;
    ++i;
    int oh, om;
    if (!Digits(s, &i, 2, &oh)) return std::nullopt;
    if (i < s.size() && s[i] == ':') ++i;
    if (!Digits(s, &i, 2, &om) || oh > 23 || om > 59) return std::nullopt;
    offset_s = sign * (oh * 3600 + om * 60);
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  int64_t secs =
      DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_s;
  return secs * 1000000000 + nanos;
}

bool ParseDockerLine(std::string_view line, std::string* log_out, DockerLine* out) {
  log_out->clear();
  *out = DockerLine{};
  size_t i = 0;
  SkipWs(line, &i);
  if (!Expect(line, &i, '{')) return false;
  bool have_log = false;
  SkipWs(line, &i);
  if (i < line.size() && line[i] == '}') return false;
  while (true) {
    SkipWs(line, &i);
    std::string_view key;
    if (!ScanString(line, &i, nullptr, &key)) return false;
    SkipWs(line, &i);
    if (!Expect(line, &i, ':')) return false;
    SkipWs(line, &i);
    if (key == "log" && i < line.size() && line[i] == '"') {
      log_out->clear();
      if (!ScanString(line, &i, log_out, nullptr)) return false;
      have_log = true;
    } else if ((key == "stream" || key == "time") && i < line.size() && line[i] == '"') {
      std::string_view raw;
      if (!ScanString(line, &i, nullptr, &raw)) return false;
      if (key == "stream") {
        out->stream = raw;
      } else {
        auto t = ParseRfc3339Nano(raw);
        if (!t) return false;
        out->time_ns = *t;
      }
    } else if (!SkipValue(line, &i)) {
      return false;
    }
    SkipWs(line, &i);
    if (i >= line.size()) return false;
    if (line[i] == ',') {
      ++i;
      continue;
    }
    if (line[i] != '}') return false;
    ++i;
    break;
  }
  SkipWs(line, &i);
  if (i != line.size() || !have_log) return false;
  if (!log_out->empty() && log_out->back() == '\n') {
    log_out->pop_back();
    out->complete = true;
  }
  return true;
}

bool ParseCriLine(std::string_view line, CriLine* out) {
  *out = CriLine{};
  size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos) return false;
  auto t = ParseRfc3339Nano(line.substr(0, sp1));
  if (!t) return false;
  size_t sp2 = line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || sp2 == sp1 + 1) return false;
  std::string_view stream = line.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t tag_end = line.find(' ', sp2 + 1);
  std::string_view tag = line.substr(
      sp2 + 1, tag_end == std::string_view::npos ? std::string_view::npos : tag_end - sp2 - 1);
  if (tag.empty()) return false;
  // Tags are ':'-separated; the first says partial (P) or full (F).
  std::string_view kind = tag.substr(0, tag.find(':'));
  if (kind != "P" && kind != "F") return false;
  out->time_ns = *t;
  out->stream = stream;
  out->complete = kind == "F";
  out->text = tag_end == std::string_view::npos ? std::string_view() : line.substr(tag_end + 1);
  return true;
}

EnvelopeParser::EnvelopeParser(EnvelopeOptions options) : options_(options) {
  if (options_.max_bytes == 0) options_.max_bytes = 1;
}

int EnvelopeParser::SlotIndex(std::string_view stream) {
  if (stream == "stdout") return 0;
  if (stream == "stderr") return 1;
  return 2;
}

namespace {
constexpr std::string_view kStreams[3] = {"stdout", "stderr", ""};

// Largest cut <= max that does not split a UTF-8 sequence, so truncation
// alone never makes a line invalid for the encoding stage.
size_t CutPoint(std::string_view s, size_t max) {
  if (s.size() <= max) return s.size();
  size_t cut = max;
  for (int k = 0; k < 3 && cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80; ++k) {
    --cut;
  }
  return cut;
}
}  // namespace

const EnvelopeRecord* EnvelopeParser::Plain(std::string_view raw, uint64_t offset) {
  record_ = EnvelopeRecord{};
  record_.offset = offset;
  size_t cut = CutPoint(raw, options_.max_bytes);
  if (cut < raw.size()) {
    record_.flags |= wire::kLogFlagTruncated;
    ++truncated_;
  }
  record_.text = raw.substr(0, cut);
  return &record_;
}

const EnvelopeRecord* EnvelopeParser::Piece(std::string_view text, std::string_view stream,
                                            int64_t time_ns, bool complete, uint64_t offset) {
  int idx = SlotIndex(stream);
  Slot& slot = slots_[idx];
  if (slot.skipping) {
    if (complete) slot.skipping = false;
    return nullptr;
  }
  record_ = EnvelopeRecord{};
  record_.stream = kStreams[idx];
  if (!slot.active) {
    if (complete) {
      // Fast path: a whole line in one piece needs no copy.
      size_t cut = CutPoint(text, options_.max_bytes);
      if (cut < text.size()) {
        record_.flags |= wire::kLogFlagTruncated;
        ++truncated_;
      }
      record_.text = text.substr(0, cut);
      record_.time_ns = time_ns;
      record_.offset = offset;
      return &record_;
    }
    slot.active = true;
    slot.offset = offset;
    slot.time_ns = time_ns;
    slot.text.clear();
  }
  slot.text.append(text);
  bool over = slot.text.size() > options_.max_bytes;
  if (!over && !complete) return nullptr;
  if (over) {
    slot.text.resize(CutPoint(slot.text, options_.max_bytes));
    record_.flags |= wire::kLogFlagTruncated;
    ++truncated_;
    slot.skipping = !complete;
  }
  slot.active = false;
  out_.swap(slot.text);  // slot keeps the old buffer's capacity for the next record
  record_.text = out_;
  record_.time_ns = slot.time_ns;
  record_.offset = slot.offset;
  return &record_;
}

const EnvelopeRecord* EnvelopeParser::Push(std::string_view raw, uint64_t offset) {
  if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
  EnvelopeFormat format = options_.format;
  if (format == EnvelopeFormat::kAuto) {
    if (!raw.empty() && raw.front() == '{') {
      format = EnvelopeFormat::kDocker;
    } else if (raw.size() > 20 && IsDigit(raw[0]) && raw[4] == '-' && raw[10] == 'T') {
      format = EnvelopeFormat::kCri;
    } else {
      format = EnvelopeFormat::kPlain;
    }
  }
  switch (format) {
    case EnvelopeFormat::kDocker: {
      DockerLine d;
      if (ParseDockerLine(raw, &log_, &d)) {
        if (d.complete && !log_.empty() && log_.back() == '\r') log_.pop_back();  // CRLF output
        return Piece(log_, d.stream, d.time_ns, d.complete, offset);
      }
      // In auto mode a JSON application log is plain text, not a broken
      // envelope; only a line that looked like docker's counts as malformed.
      if (options_.format == EnvelopeFormat::kDocker || raw.starts_with("{\"log\":")) ++malformed_;
      return Plain(raw, offset);
    }
    case EnvelopeFormat::kCri: {
      CriLine c;
      if (ParseCriLine(raw, &c)) return Piece(c.text, c.stream, c.time_ns, c.complete, offset);
      if (options_.format == EnvelopeFormat::kCri) ++malformed_;
      return Plain(raw, offset);
    }
    default:
      return Plain(raw, offset);
  }
}

const EnvelopeRecord* EnvelopeParser::Flush() {
  Slot* best = nullptr;
  int best_idx = 0;
  for (int k = 0; k < 3; ++k) {
    if (slots_[k].active && (best == nullptr || slots_[k].offset < best->offset)) {
      best = &slots_[k];
      best_idx = k;
    }
  }
  if (best == nullptr) return nullptr;
  best->active = false;
  out_.swap(best->text);
  record_ = EnvelopeRecord{};
  record_.text = out_;
  record_.stream = kStreams[best_idx];
  record_.time_ns = best->time_ns;
  record_.offset = best->offset;
  record_.flags = wire::kLogFlagPartial;
  return &record_;
}

std::optional<uint64_t> EnvelopeParser::PendingStartOffset() const {
  std::optional<uint64_t> min;
  for (const Slot& s : slots_) {
    if (s.active && (!min || s.offset < *min)) min = s.offset;
  }
  return min;
}

}  // namespace vigil::parse::logs

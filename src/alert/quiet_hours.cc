#include "alert/quiet_hours.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/civil_time.h"

namespace vigil::alert {
namespace {

constexpr int64_t kDay = 86'400;

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// 0 = Sunday.
int Weekday(int64_t days) { return static_cast<int>(((days + 4) % 7 + 7) % 7); }

Status BadRule(std::string_view rule) {
  return InvalidArgument("\"" + std::string(rule) + "\" is not a POSIX TZ rule");
}

}  // namespace

struct TimeZone::Rule {
  enum class DateKind { kJulian1, kJulian0, kMonth };
  struct Date {
    DateKind kind = DateKind::kMonth;
    int a = 0, b = 0, c = 0;  // Jn: a; n: a; Mm.w.d: a=m b=w c=d
    int time = 7200;          // seconds after local midnight (may be negative or > 24 h)
  };
  int std_offset = 0;  // seconds east of UTC
  bool has_dst = false;
  int dst_offset = 0;
  Date start, end;

  // The local day (days since the epoch) of `date` in `year`.
  static int64_t Day(const Date& date, int64_t year) {
    switch (date.kind) {
      case DateKind::kJulian1: {
        int64_t d = date.a - 1;  // February 29 is never counted
        if (IsLeap(year) && date.a >= 60) ++d;
        return DaysFromCivil(year, 1, 1) + d;
      }
      case DateKind::kJulian0:
        return DaysFromCivil(year, 1, 1) + date.a;
      case DateKind::kMonth: {
        auto m = static_cast<unsigned>(date.a);
        int64_t first = DaysFromCivil(year, m, 1);
        int64_t day = first + (date.c - Weekday(first) + 7) % 7 + (date.b - 1) * 7;
        while (day >= first + DaysInMonth(year, m)) day -= 7;  // week 5: the last
        return day;
      }
    }
    return 0;
  }

  int OffsetAt(int64_t t) const {
    if (!has_dst) return std_offset;
    int64_t year = CivilFromDays(FloorDiv(t + std_offset, kDay)).year;
    // The start is given in standard time, the end in daylight time.
    int64_t s = Day(start, year) * kDay + start.time - std_offset;
    int64_t e = Day(end, year) * kDay + end.time - dst_offset;
    bool dst = s < e ? (s <= t && t < e) : !(e <= t && t < s);
    return dst ? dst_offset : std_offset;
  }
};

struct TimeZone::Zone {
  std::vector<int64_t> times;   // transitions, ascending
  std::vector<uint8_t> types;   // the type each transition starts
  std::vector<int32_t> utoffs;  // per type, seconds east of UTC
  std::shared_ptr<const Rule> footer;

  int OffsetAt(int64_t t) const {
    if (footer && (times.empty() || t >= times.back())) return footer->OffsetAt(t);
    if (times.empty() || t < times.front()) return utoffs[0];
    size_t i = static_cast<size_t>(std::upper_bound(times.begin(), times.end(), t) - times.begin());
    return utoffs[types[i - 1]];
  }
};

namespace {

class RuleParser {
 public:
  explicit RuleParser(std::string_view s) : s_(s) {}

  bool Name() {
    if (Peek() == '<') {
      size_t close = s_.find('>', i_);
      if (close == std::string_view::npos || close == i_ + 1) return false;
      i_ = close + 1;
      return true;
    }
    size_t start = i_;
    while (i_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[i_]))) ++i_;
    return i_ - start >= 3;
  }

  // [+-]hh[:mm[:ss]], in seconds; `max_hours` 24 for offsets, 167 for times.
  bool Time(int max_hours, int* out) {
    int sign = 1;
    if (Peek() == '+' || Peek() == '-') sign = s_[i_++] == '-' ? -1 : 1;
    int h, m = 0, sec = 0;
    if (!Number(0, max_hours, &h)) return false;
    if (Peek() == ':') {
      ++i_;
      if (!Number(0, 59, &m)) return false;
      if (Peek() == ':') {
        ++i_;
        if (!Number(0, 59, &sec)) return false;
      }
    }
    *out = sign * (h * 3600 + m * 60 + sec);
    return true;
  }

  bool Date(TimeZone::Rule::Date* d) {
    using Kind = TimeZone::Rule::DateKind;
    if (Peek() == 'J') {
      ++i_;
      d->kind = Kind::kJulian1;
      if (!Number(1, 365, &d->a)) return false;
    } else if (Peek() == 'M') {
      ++i_;
      d->kind = Kind::kMonth;
      if (!Number(1, 12, &d->a) || !Expect('.') || !Number(1, 5, &d->b) || !Expect('.') ||
          !Number(0, 6, &d->c)) {
        return false;
      }
    } else {
      d->kind = Kind::kJulian0;
      if (!Number(0, 365, &d->a)) return false;
    }
    d->time = 7200;
    if (Peek() == '/') {
      ++i_;
      if (!Time(167, &d->time)) return false;
    }
    return true;
  }

  bool Expect(char c) {
    if (Peek() != c) return false;
    ++i_;
    return true;
  }
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool Done() const { return i_ == s_.size(); }

 private:
  bool Number(int min, int max, int* out) {
    size_t start = i_;
    int v = 0;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])) && i_ - start < 4) {
      v = v * 10 + (s_[i_++] - '0');
    }
    if (i_ == start || v < min || v > max) return false;
    *out = v;
    return true;
  }

  std::string_view s_;
  size_t i_ = 0;
};

Result<std::shared_ptr<const TimeZone::Rule>> ParseRule(std::string_view text) {
  auto rule = std::make_shared<TimeZone::Rule>();
  RuleParser p(text);
  int off;
  if (!p.Name() || !p.Time(24, &off)) return BadRule(text);
  rule->std_offset = -off;
  if (p.Done()) return std::shared_ptr<const TimeZone::Rule>(std::move(rule));
  if (!p.Name()) return BadRule(text);
  rule->has_dst = true;
  rule->dst_offset = rule->std_offset + 3600;
  if (p.Peek() != ',' && !p.Done()) {
    if (!p.Time(24, &off)) return BadRule(text);
    rule->dst_offset = -off;
  }
  if (p.Done()) {
    // No rule: the C library's default, the United States' since 2007.
    rule->start = {TimeZone::Rule::DateKind::kMonth, 3, 2, 0, 7200};
    rule->end = {TimeZone::Rule::DateKind::kMonth, 11, 1, 0, 7200};
  } else if (!p.Expect(',') || !p.Date(&rule->start) || !p.Expect(',') || !p.Date(&rule->end) ||
             !p.Done()) {
    return BadRule(text);
  }
  return std::shared_ptr<const TimeZone::Rule>(std::move(rule));
}

uint32_t Be32(std::string_view d, size_t at) {
  return (static_cast<uint32_t>(static_cast<unsigned char>(d[at])) << 24) |
         (static_cast<uint32_t>(static_cast<unsigned char>(d[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<unsigned char>(d[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<unsigned char>(d[at + 3]));
}

int64_t Be64(std::string_view d, size_t at) {
  return static_cast<int64_t>((static_cast<uint64_t>(Be32(d, at)) << 32) | Be32(d, at + 4));
}

bool ValidZoneName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name.front() == '/' || name.back() == '/') return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '/' && c != '_' && c != '-' &&
        c != '+') {
      return false;
    }
  }
  for (std::string_view part : {std::string_view("/../"), std::string_view("//")}) {
    if (("/" + std::string(name) + "/").find(part) != std::string::npos) return false;
  }
  return name != "." && name != "..";
}

}  // namespace

TimeZone TimeZone::Local() {
  TimeZone z;
  z.kind_ = Kind::kLocal;
  z.name_ = "local";
  return z;
}

TimeZone TimeZone::Fixed(int offset_seconds) {
  TimeZone z;
  z.kind_ = Kind::kFixed;
  z.fixed_offset_ = offset_seconds;
  int m = std::abs(offset_seconds) / 60;
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%c%02d:%02d", offset_seconds < 0 ? '-' : '+', m / 60, m % 60);
  z.name_ = offset_seconds == 0 ? "UTC" : buf;
  return z;
}

Result<TimeZone> TimeZone::FromPosixRule(std::string_view rule) {
  auto r = ParseRule(rule);
  if (!r.ok()) return r.status();
  TimeZone z;
  z.kind_ = Kind::kRule;
  z.rule_ = std::move(r).value();
  z.name_ = std::string(rule);
  return z;
}

Result<TimeZone> TimeZone::FromTzif(std::string_view d, std::string name) {
  auto bad = [&](const char* why) {
    return InvalidArgument("the time zone file of \"" + name + "\" is not valid TZif: " + why);
  };
  constexpr size_t kHeader = 44;
  if (d.size() < kHeader || d.substr(0, 4) != "TZif") return bad("no TZif header");
  struct Counts {
    uint64_t isut, isstd, leap, time, type, chars;
  };
  auto counts = [&](size_t at) {
    return Counts{Be32(d, at + 20), Be32(d, at + 24), Be32(d, at + 28),
                  Be32(d, at + 32), Be32(d, at + 36), Be32(d, at + 40)};
  };
  auto block_size = [](const Counts& c, uint64_t time_size) {
    return c.time * time_size + c.time + c.type * 6 + c.chars + c.leap * (time_size + 4) + c.isstd +
           c.isut;
  };
  Counts c = counts(0);
  if (c.time > 1'000'000 || c.type > 256 || c.chars > 1'000'000 || c.leap > 1'000'000 ||
      c.isstd > 256 || c.isut > 256) {
    return bad("counts out of range");
  }
  size_t at = kHeader;
  size_t time_size = 4;
  if (d[4] >= '2') {
    // Version 2+: skip the 32-bit block; the 64-bit one and the footer follow.
    at += block_size(c, 4);
    if (d.size() < at + kHeader || d.substr(at, 4) != "TZif") return bad("no second header");
    c = counts(at);
    if (c.time > 1'000'000 || c.type > 256 || c.chars > 1'000'000 || c.leap > 1'000'000 ||
        c.isstd > 256 || c.isut > 256) {
      return bad("counts out of range");
    }
    at += kHeader;
    time_size = 8;
  }
  if (c.type == 0) return bad("no local time type");
  if (d.size() < at + block_size(c, time_size)) return bad("truncated");
  auto zone = std::make_shared<Zone>();
  for (uint64_t i = 0; i < c.time; ++i) {
    size_t p = at + i * time_size;
    zone->times.push_back(time_size == 8 ? Be64(d, p) : static_cast<int32_t>(Be32(d, p)));
  }
  at += c.time * time_size;
  for (uint64_t i = 0; i < c.time; ++i) {
    auto t = static_cast<uint8_t>(d[at + i]);
    if (t >= c.type) return bad("a transition to an unknown type");
    zone->types.push_back(t);
  }
  at += c.time;
  for (uint64_t i = 0; i < c.type; ++i) {
    zone->utoffs.push_back(static_cast<int32_t>(Be32(d, at + i * 6)));
  }
  at += block_size(c, time_size) - c.time * time_size - c.time;
  if (!std::is_sorted(zone->times.begin(), zone->times.end())) return bad("unsorted transitions");
  if (time_size == 8 && at < d.size() && d[at] == '\n') {
    size_t end = d.find('\n', at + 1);
    if (end == std::string_view::npos) return bad("unterminated footer");
    std::string_view footer = d.substr(at + 1, end - at - 1);
    if (!footer.empty()) {
      auto rule = ParseRule(footer);
      if (!rule.ok()) return bad("its footer is not a POSIX TZ rule");
      zone->footer = std::move(rule).value();
    }
  }
  TimeZone z;
  z.kind_ = Kind::kZone;
  z.zone_ = std::move(zone);
  z.name_ = std::move(name);
  return z;
}

Result<TimeZone> TimeZone::Parse(std::string_view name, std::string tzdir) {
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "utc") return Utc();
  if (lower == "local") return Local();
  if (!name.empty() && (name[0] == '+' || name[0] == '-')) {
    // +HH:MM or -HH:MM, at most 14 hours from UTC.
    bool shape = name.size() == 6 && name[3] == ':' &&
                 std::all_of(name.begin() + 1, name.end(), [](char ch) {
                   return ch == ':' || std::isdigit(static_cast<unsigned char>(ch));
                 });
    int h = shape ? (name[1] - '0') * 10 + (name[2] - '0') : 99;
    int m = shape ? (name[4] - '0') * 10 + (name[5] - '0') : 99;
    if (!shape || m > 59 || h * 60 + m > 14 * 60) {
      return InvalidArgument("\"" + std::string(name) +
                             "\" is not a UTC offset from -14:00 to +14:00 such as \"+08:00\"");
    }
    return Fixed((name[0] == '-' ? -1 : 1) * (h * 3600 + m * 60));
  }
  if (tzdir.empty()) {
    const char* env = std::getenv("TZDIR");
    tzdir = env != nullptr && *env != '\0' ? env : "/usr/share/zoneinfo";
  }
  std::string hint =
      "; use an IANA name such as \"Asia/Shanghai\", \"UTC\", \"local\" or an "
      "offset such as \"+08:00\"";
  if (!ValidZoneName(name)) {
    return InvalidArgument("\"" + std::string(name) + "\" is not a time zone name" + hint);
  }
  std::string path = tzdir + "/" + std::string(name);
  std::ifstream in(path, std::ios::binary);
  std::string data;
  if (in) {
    std::ostringstream buf;
    buf << in.rdbuf();
    data = buf.str();
  }
  if (data.empty() || data.size() > (1 << 20) || data.compare(0, 4, "TZif") != 0) {
    return InvalidArgument("time zone \"" + std::string(name) +
                           "\" is not in this system's time zone database (" + tzdir + ")" + hint);
  }
  return FromTzif(data, std::string(name));
}

int TimeZone::OffsetAt(int64_t unix_seconds) const {
  switch (kind_) {
    case Kind::kFixed:
      return fixed_offset_;
    case Kind::kRule:
      return rule_->OffsetAt(unix_seconds);
    case Kind::kZone:
      return zone_->OffsetAt(unix_seconds);
    case Kind::kLocal: {
      auto t = static_cast<std::time_t>(unix_seconds);
      std::tm tm{};
      if (localtime_r(&t, &tm) == nullptr) return 0;
      return static_cast<int>(tm.tm_gmtoff);
    }
  }
  return 0;
}

Result<int> ParseClockTime(std::string_view text) {
  size_t colon = text.find(':');
  auto digits = [](std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
      return std::isdigit(static_cast<unsigned char>(ch));
    });
  };
  if (colon == std::string_view::npos || colon == 0 || colon > 2 || text.size() != colon + 3 ||
      !digits(text.substr(0, colon)) || !digits(text.substr(colon + 1))) {
    return InvalidArgument("\"" + std::string(text) + "\" is not a time of day such as \"22:00\"");
  }
  int h = std::atoi(std::string(text.substr(0, colon)).c_str());
  int m = std::atoi(std::string(text.substr(colon + 1)).c_str());
  if (h > 23 || m > 59) {
    return InvalidArgument("\"" + std::string(text) +
                           "\" is not a time of day from 00:00 to 23:59");
  }
  return h * 60 + m;
}

Result<QuietHours> ParseQuietHours(std::string_view start, std::string_view end,
                                   std::string_view timezone, std::string tzdir) {
  QuietHours q;
  auto s = ParseClockTime(start);
  if (!s.ok()) return s.status().WithContext("start");
  auto e = ParseClockTime(end);
  if (!e.ok()) return e.status().WithContext("end");
  if (*s == *e) return InvalidArgument("start and end must differ");
  auto z = TimeZone::Parse(timezone, std::move(tzdir));
  if (!z.ok()) return z.status().WithContext("timezone");
  q.start_minute = *s;
  q.end_minute = *e;
  q.zone = std::move(z).value();
  return q;
}

bool InQuietHours(const QuietHours& q, int64_t unix_ms) {
  int64_t t = FloorDiv(unix_ms, 1000);
  int64_t local = t + q.zone.OffsetAt(t);
  int minute = static_cast<int>((local - FloorDiv(local, kDay) * kDay) / 60);
  if (q.start_minute < q.end_minute) return minute >= q.start_minute && minute < q.end_minute;
  return minute >= q.start_minute || minute < q.end_minute;  // across midnight
}

}  // namespace vigil::alert

// Values: the numbers a metric is written as (decimal, scientific, the
// non-finite words of Python, JSON and C) and the units glued to them
// ("12.3ms", "19.61it/s", "1.1 s"), which drop, name a rate, or show that a
// token is no plain number. Separate from the scanners as every form reads
// its values through here; the number parser is among the hottest code of
// the extractor.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <limits>

#include "parse/training/log_metrics_internal.h"

namespace vigil::parse::training::internal {
namespace {

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

}  // namespace

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

Unit ReadUnit(std::string_view s, size_t i) {
  size_t j = i;
  while (j < s.size() && j - i <= kMaxUnitLen && IsUnitChar(s[j])) ++j;
  Unit unit = ClassifyUnit(s.substr(i, j - i));
  unit.end = j;
  if (j - i > kMaxUnitLen) unit.kind = UnitKind::kUnknown;
  return unit;
}

}  // namespace vigil::parse::training::internal

#include "net/exposition.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/strings.h"

namespace vigil::net {

bool IsNameStart(char c, bool colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
}
bool IsNameChar(char c, bool colon) { return IsNameStart(c, colon) || (c >= '0' && c <= '9'); }

namespace {

bool IsValidName(std::string_view s, bool colon) {
  if (s.empty() || !IsNameStart(s[0], colon)) return false;
  for (char c : s) {
    if (!IsNameChar(c, colon)) return false;
  }
  return true;
}

bool IsCont(unsigned char c) { return (c & 0xC0) == 0x80; }

// Length of the valid UTF-8 sequence at s[i], or 0 if it is not valid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto at = [&](size_t k) -> unsigned char { return i + k < s.size() ? s[i + k] : 0; };
  unsigned char c = at(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return IsCont(at(1)) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return at(1) >= lo && at(1) <= hi && IsCont(at(2)) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return at(1) >= lo && at(1) <= hi && IsCont(at(2)) && IsCont(at(3)) ? 4 : 0;
  }
  return 0;
}

void AppendEscaped(std::string* out, std::string_view s, bool help);

void AppendName(std::string* out, const wire::Labels& labels, std::string_view name) {
  out->append(name);
  bool first = true;
  for (const auto& l : labels) {
    if (l.name == wire::kMetricNameLabel || l.value.empty()) continue;
    out->append(first ? "{" : ",");
    first = false;
    out->append(l.name).append("=\"");
    AppendEscaped(out, l.value, /*help=*/false);
    out->push_back('"');
  }
  if (!first) out->append("}");
}

bool RenderableLabels(const wire::Labels& labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].name == wire::kMetricNameLabel) continue;
    if (!IsValidLabelName(labels[i].name)) return false;
    for (size_t j = 0; j < i; ++j) {
      if (labels[j].name == labels[i].name) return false;  // duplicate names fail a scrape
    }
  }
  return true;
}

}  // namespace

bool IsValidMetricName(std::string_view s) { return IsValidName(s, true); }
bool IsValidLabelName(std::string_view s) { return IsValidName(s, false); }

namespace {

// Appends `s` escaped. Most values (GPU indexes, UUIDs, modes) need no escape
// and are ASCII: those are appended whole, without the byte-by-byte walk.
void AppendEscaped(std::string* out, std::string_view s, bool help) {
  bool plain = true;
  for (char c : s) {
    if (c == '\\' || c == '\n' || (c == '"' && !help) || static_cast<unsigned char>(c) >= 0x80) {
      plain = false;
      break;
    }
  }
  if (plain) {
    out->append(s);
    return;
  }
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      *out += "\xEF\xBF\xBD";  // U+FFFD: Prometheus rejects invalid UTF-8
      ++i;
      continue;
    }
    char c = s[i];
    if (c == '\\') {
      *out += "\\\\";
    } else if (c == '\n') {
      *out += "\\n";
    } else if (c == '"' && !help) {
      *out += "\\\"";
    } else {
      out->append(s.substr(i, n));
    }
    i += n;
  }
}

}  // namespace

std::string EscapeExposition(std::string_view s, bool help) {
  std::string out;
  out.reserve(s.size());
  AppendEscaped(&out, s, help);
  return out;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return std::signbit(v) ? "-0" : "0";
  // Shortest round-trip digits, then Go's 'g' layout: exponent form when the
  // exponent is below -4 or at least 6 (so 1e+06, 123456, 1.5e-05).
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  const bool neg = sci.front() == '-';
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(neg ? 1 : 0, e - (neg ? 1 : 0))) {
    if (c != '.') digits += c;
  }
  int exp = 0;
  std::string_view exp_text = sci.substr(e + 1);
  if (!exp_text.empty() && exp_text.front() == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp);

  std::string out = neg ? "-" : "";
  if (exp < -4 || exp >= 6) {
    out += digits[0];
    if (digits.size() > 1) out.append(".").append(digits.substr(1));
    out += exp < 0 ? "e-" : "e+";
    int a = exp < 0 ? -exp : exp;
    if (a < 10) out += '0';
    out += std::to_string(a);
  } else if (exp >= 0) {
    size_t int_len = static_cast<size_t>(exp) + 1;
    if (digits.size() <= int_len) {
      out += digits + std::string(int_len - digits.size(), '0');
    } else {
      out += digits.substr(0, int_len) + "." + digits.substr(int_len);
    }
  } else {
    out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  }
  return out;
}

std::string RenderSeriesName(const wire::Labels& labels) {
  std::string_view name = wire::MetricName(labels);
  if (!IsValidMetricName(name) || !RenderableLabels(labels)) return "";
  std::string out;
  AppendName(&out, labels, name);
  return out;
}

std::string RenderExpositionOf(std::span<const wire::MetricFamily> families,
                               std::span<const RenderedPoint> points) {
  std::unordered_map<std::string_view, const wire::MetricFamily*> family_of;
  for (const auto& f : families) family_of.emplace(f.name, &f);
  // Samples of one family must be contiguous, under its HELP and TYPE;
  // within a family they keep their input order.
  std::vector<const RenderedPoint*> order;
  order.reserve(points.size());
  size_t bytes = 0;
  for (const auto& p : points) {
    order.push_back(&p);
    bytes += p.series.size() + 24;
  }
  std::stable_sort(order.begin(), order.end(), [](const RenderedPoint* a, const RenderedPoint* b) {
    return a->name < b->name;
  });
  std::string out;
  out.reserve(bytes + families.size() * 96);
  std::string_view current;
  for (size_t i = 0; i < order.size(); ++i) {
    const RenderedPoint& p = *order[i];
    if (i == 0 || p.name != current) {
      current = p.name;
      auto it = family_of.find(p.name);
      if (it != family_of.end()) {
        const wire::MetricFamily& f = *it->second;
        if (!f.help.empty()) {
          out.append("# HELP ").append(p.name).append(" ");
          AppendEscaped(&out, f.help, /*help=*/true);
          out += '\n';
        }
        out.append("# TYPE ").append(p.name).append(" ").append(wire::MetricTypeName(f.type));
        out += '\n';
      }
    }
    out.append(p.series).append(" ").append(FormatValue(p.value));
    out += '\n';
  }
  return out;
}

std::string RenderExposition(std::span<const wire::MetricFamily> families,
                             std::span<const ExpositionPoint> points, RenderStats* stats) {
  std::vector<std::string> texts;
  texts.reserve(points.size());
  RenderStats local;
  for (const auto& p : points) {
    texts.push_back(RenderSeriesName(p.labels));
    if (texts.back().empty()) ++local.skipped;
  }
  std::vector<RenderedPoint> rendered;
  rendered.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i) {
    if (texts[i].empty()) continue;
    rendered.push_back({wire::MetricName(points[i].labels), texts[i], points[i].sample.value});
  }
  local.series = rendered.size();
  if (stats) *stats = local;
  return RenderExpositionOf(families, rendered);
}

}  // namespace vigil::net

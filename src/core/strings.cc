#include "core/strings.h"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace vigil {
namespace {
bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
}  // namespace

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> SplitFields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    size_t start = i;
    while (i < s.size() && !IsSpace(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
std::string_view CutUtf8(std::string_view s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  // Back up over continuation bytes to the start of the cut sequence.
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string RedactUrls(std::string_view in) {
  std::string out;
  size_t i = 0;
  while (true) {
    const size_t sep = in.find("://", i);
    if (sep == std::string_view::npos) break;
    size_t host = sep + 3, end = host;
    while (end < in.size() && !std::isspace(static_cast<unsigned char>(in[end]))) ++end;
    // The authority: up to the first '/', '?' or '#'; user info dropped.
    size_t auth_end = host;
    while (auth_end < end && in[auth_end] != '/' && in[auth_end] != '?' && in[auth_end] != '#') {
      ++auth_end;
    }
    std::string_view authority = in.substr(host, auth_end - host);
    if (size_t at = authority.rfind('@'); at != std::string_view::npos) {
      authority.remove_prefix(at + 1);
    }
    // Punctuation after the URL ("...: refused") is the message's, not the URL's.
    size_t keep = end;
    while (keep > auth_end && std::strchr(":,;.)'\"", in[keep - 1]) != nullptr) --keep;
    out.append(in.substr(i, host - i));
    out.append(authority);
    if (auth_end < keep) out.append("/...");
    out.append(in.substr(keep, end - keep));  // keep == auth_end without a path
    i = end;
  }
  out.append(in.substr(i));
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::optional<int64_t> ParseInt64(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<uint64_t> ParseUint64(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<double> ParseDouble(std::string_view s) {
  if (s.empty() || s.size() > 64) return std::nullopt;
  // strtod accepts "inf"/"nan" as Prometheus does; from_chars for double is
  // not in GCC 12's libstdc++ for all formats, so copy to a terminated buffer.
  char buf[65];
  s.copy(buf, s.size());
  buf[s.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(buf, &end);
  if (end != buf + s.size()) return std::nullopt;
  return v;
}

std::string HumanBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string HumanDuration(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  int64_t d = seconds / 86400, h = seconds / 3600 % 24, m = seconds / 60 % 60, s = seconds % 60;
  char buf[48];
  if (d > 0)
    std::snprintf(buf, sizeof(buf), "%lldd %lldh", (long long)d, (long long)h);
  else if (h > 0)
    std::snprintf(buf, sizeof(buf), "%lldh %lldm", (long long)h, (long long)m);
  else if (m > 0)
    std::snprintf(buf, sizeof(buf), "%lldm %llds", (long long)m, (long long)s);
  else
    std::snprintf(buf, sizeof(buf), "%llds", (long long)s);
  return buf;
}

std::string FormatRfc3339(int64_t unix_ms) {
  int64_t secs = unix_ms / 1000, ms = unix_ms % 1000;
  if (ms < 0) secs -= 1, ms += 1000;
  time_t t = static_cast<time_t>(secs);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[40];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  if (ms != 0) {
    char frac[8];
    std::snprintf(frac, sizeof(frac), ".%03d", static_cast<int>(ms));
    std::string f = frac;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "Z";
}

}  // namespace vigil

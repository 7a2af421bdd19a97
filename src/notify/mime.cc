#include "notify/mime.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "core/crypto.h"

namespace vigil::notify {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";
constexpr size_t kQpLine = 76;

bool IsUtf8Continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

// One line (no line end) as quoted-printable with soft breaks.
void QpLine(std::string_view line, std::string* out) {
  size_t column = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(line[i]);
    bool last = i + 1 == line.size();
    bool literal = (c >= 33 && c <= 126 && c != '=') || ((c == ' ' || c == '\t') && !last);
    std::string piece = literal ? std::string(1, static_cast<char>(c))
                                : std::string{'=', kHex[c >> 4], kHex[c & 15]};
    // Room for the piece and a soft break's "=" (none needed after the last).
    if (column + piece.size() + (last ? 0 : 1) > kQpLine) {
      out->append("=\r\n");
      column = 0;
    }
    out->append(piece);
    column += piece.size();
  }
}

}  // namespace

std::string QuotedPrintable(std::string_view text) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    std::string_view line =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    QpLine(line, &out);
    if (end == std::string_view::npos) break;
    out.append("\r\n");
    start = end + 1;
  }
  return out;
}

std::string Base64Lines(std::string_view data) {
  std::string b64 = Base64Encode(data);
  std::string out;
  for (size_t i = 0; i < b64.size(); i += kQpLine) out += b64.substr(i, kQpLine) + "\r\n";
  return out;
}

EncodedBody EncodeBody(std::string_view text) {
  size_t other = 0;
  for (char c : text) other += static_cast<unsigned char>(c) >= 0x80;
  if (other * 10 > text.size() * 3) return {"base64", Base64Lines(text)};
  return {"quoted-printable", QuotedPrintable(text)};
}

std::string HeaderText(std::string_view value) {
  std::string clean(value);
  bool ascii = true;
  for (char& c : clean) {
    if (c == '\r' || c == '\n' || c == '\t') c = ' ';
    ascii &= static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7F;
  }
  if (ascii) return clean;
  // 39 bytes of text make 52 base64 characters: a word of 64 with its
  // "=?UTF-8?B?" and "?=", leaving room for "Subject: " on the first line.
  constexpr size_t kWordBytes = 39;
  std::string out;
  for (size_t i = 0; i < clean.size();) {
    size_t n = std::min(kWordBytes, clean.size() - i);
    while (i + n < clean.size() && n > 0 &&
           IsUtf8Continuation(static_cast<unsigned char>(clean[i + n]))) {
      --n;
    }
    if (n == 0) n = std::min(kWordBytes, clean.size() - i);  // not UTF-8: cut anyway
    if (!out.empty()) out += "\r\n ";
    out += "=?UTF-8?B?" + Base64Encode(std::string_view(clean).substr(i, n)) + "?=";
    i += n;
  }
  return out;
}

std::string Mailbox(std::string_view display, std::string_view address) {
  if (display.empty()) return std::string(address);
  std::string name = HeaderText(display);
  bool encoded = name.starts_with("=?");
  if (!encoded && name.find_first_of("()<>[]:;@\\,.\"") != std::string::npos) {
    std::string quoted = "\"";
    for (char c : name) {
      if (c == '"' || c == '\\') quoted += '\\';
      quoted += c;
    }
    name = quoted + "\"";
  }
  return name + " <" + std::string(address) + ">";
}

std::string Rfc5322Date(int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  // Day and month names are RFC 5322's, not the locale's.
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s, %02d %s %04d %02d:%02d:%02d +0000", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return buf;
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace vigil::notify

#include "query/lexer.h"

#include <cctype>
#include <cstdint>

namespace vigil::query {
namespace {

bool IsIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == ':';
}
bool IsIdentChar(char c) { return IsIdentStart(c) || std::isdigit(static_cast<unsigned char>(c)); }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

Status LexError(std::string_view q, size_t pos, const std::string& msg) {
  return InvalidArgument(PosString(q, pos) + ": parse error: " + msg);
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool IsDurationUnit(std::string_view q, size_t i, size_t* len) {
  if (i >= q.size()) return false;
  if (q.substr(i, 2) == "ms") {
    *len = 2;
  } else if (std::string_view("smhdwy").find(q[i]) != std::string_view::npos) {
    *len = 1;
  } else {
    return false;
  }
  // "5min" is not a duration; a unit must not run into more letters.
  return !(i + *len < q.size() && std::isalpha(static_cast<unsigned char>(q[i + *len])));
}

// A number ("1", "1.5e3", "0x1f", ".5") or a duration ("5m", "1h30m").
size_t LexNumberOrDuration(std::string_view q, size_t i, Tok* kind) {
  size_t start = i;
  if (q.substr(i, 2) == "0x" || q.substr(i, 2) == "0X") {
    i += 2;
    while (i < q.size() && std::isxdigit(static_cast<unsigned char>(q[i]))) ++i;
    *kind = Tok::kNumber;
    return i;
  }
  while (i < q.size() && IsDigit(q[i])) ++i;
  size_t ulen = 0;
  if (i > start && IsDurationUnit(q, i, &ulen)) {
    // Durations: digits+unit repeated.
    while (i > start && IsDurationUnit(q, i, &ulen)) {
      i += ulen;
      size_t d = i;
      while (i < q.size() && IsDigit(q[i])) ++i;
      if (i == d) break;
    }
    *kind = Tok::kDuration;
    return i;
  }
  if (i < q.size() && q[i] == '.') {
    ++i;
    while (i < q.size() && IsDigit(q[i])) ++i;
  }
  if (i < q.size() && (q[i] == 'e' || q[i] == 'E')) {
    size_t j = i + 1;
    if (j < q.size() && (q[j] == '+' || q[j] == '-')) ++j;
    if (j < q.size() && IsDigit(q[j])) {
      i = j;
      while (i < q.size() && IsDigit(q[i])) ++i;
    }
  }
  *kind = Tok::kNumber;
  return i;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

// Go's strconv.Unquote rules for "..." and '...' (PromQL strings); `...` is raw.
Result<size_t> LexString(std::string_view q, size_t i, std::string* out) {
  char quote = q[i];
  size_t start = i++;
  while (i < q.size() && q[i] != quote) {
    char c = q[i];
    if (quote == '`' || c != '\\') {
      if (c == '\n' && quote != '`') return LexError(q, start, "unterminated quoted string");
      out->push_back(c);
      ++i;
      continue;
    }
    if (++i >= q.size()) break;
    char e = q[i++];
    switch (e) {
      case 'a':
        out->push_back('\a');
        break;
      case 'b':
        out->push_back('\b');
        break;
      case 'f':
        out->push_back('\f');
        break;
      case 'n':
        out->push_back('\n');
        break;
      case 'r':
        out->push_back('\r');
        break;
      case 't':
        out->push_back('\t');
        break;
      case 'v':
        out->push_back('\v');
        break;
      case '\\':
      case '"':
      case '\'':
        out->push_back(e);
        break;
      case 'x':
      case 'u':
      case 'U': {
        size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        if (i + n > q.size()) return LexError(q, i, "invalid escape sequence");
        uint32_t cp = 0;
        for (size_t k = 0; k < n; ++k) {
          char h = q[i + k];
          if (!std::isxdigit(static_cast<unsigned char>(h))) {
            return LexError(q, i, "invalid escape sequence");
          }
          cp = cp * 16 + static_cast<uint32_t>(IsDigit(h) ? h - '0' : (std::tolower(h) - 'a' + 10));
        }
        i += n;
        if (e == 'x') {
          out->push_back(static_cast<char>(cp));
        } else {
          AppendUtf8(cp, out);
        }
        break;
      }
      default:
        return LexError(q, i - 2, std::string("unknown escape sequence '\\") + e + "'");
    }
  }
  if (i >= q.size()) return LexError(q, start, "unterminated quoted string");
  return i + 1;
}

std::string PosString(std::string_view q, size_t pos) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos && i < q.size(); ++i) {
    if (q[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return std::to_string(line) + ":" + std::to_string(col);
}

Result<std::vector<Token>> Lex(std::string_view q) {
  std::vector<Token> out;
  size_t i = 0;
  while (true) {
    while (i < q.size() && std::isspace(static_cast<unsigned char>(q[i]))) ++i;
    if (i < q.size() && q[i] == '#') {  // comment to end of line
      while (i < q.size() && q[i] != '\n') ++i;
      continue;
    }
    Token t;
    t.pos = i;
    if (i >= q.size()) {
      out.push_back(t);
      return out;
    }
    char c = q[i];
    char n = i + 1 < q.size() ? q[i + 1] : '\0';
    auto two = [&](Tok k) {
      t.kind = k;
      i += 2;
    };
    auto one = [&](Tok k) {
      t.kind = k;
      i += 1;
    };
    if (IsDigit(c) || (c == '.' && IsDigit(n))) {
      size_t end = LexNumberOrDuration(q, i, &t.kind);
      t.text = std::string(q.substr(i, end - i));
      i = end;
    } else if (IsIdentStart(c)) {
      size_t end = i;
      while (end < q.size() && IsIdentChar(q[end])) ++end;
      t.text = std::string(q.substr(i, end - i));
      t.kind = (EqualsIgnoreCase(t.text, "inf") || EqualsIgnoreCase(t.text, "nan")) ? Tok::kNumber
                                                                                    : Tok::kIdent;
      i = end;
    } else if (c == '"' || c == '\'' || c == '`') {
      VIGIL_ASSIGN_OR_RETURN(i, LexString(q, i, &t.text));
      t.kind = Tok::kString;
    } else if (c == '=' && n == '=') {
      two(Tok::kEqlEql);
    } else if (c == '=' && n == '~') {
      two(Tok::kRegex);
    } else if (c == '!' && n == '=') {
      two(Tok::kNeq);
    } else if (c == '!' && n == '~') {
      two(Tok::kNotRegex);
    } else if (c == '>' && n == '=') {
      two(Tok::kGe);
    } else if (c == '<' && n == '=') {
      two(Tok::kLe);
    } else {
      switch (c) {
        case '(':
          one(Tok::kLParen);
          break;
        case ')':
          one(Tok::kRParen);
          break;
        case '{':
          one(Tok::kLBrace);
          break;
        case '}':
          one(Tok::kRBrace);
          break;
        case '[':
          one(Tok::kLBracket);
          break;
        case ']':
          one(Tok::kRBracket);
          break;
        case ',':
          one(Tok::kComma);
          break;
        case ':':
          one(Tok::kColon);
          break;
        case '@':
          one(Tok::kAt);
          break;
        case '=':
          one(Tok::kAssign);
          break;
        case '+':
          one(Tok::kAdd);
          break;
        case '-':
          one(Tok::kSub);
          break;
        case '*':
          one(Tok::kMul);
          break;
        case '/':
          one(Tok::kDiv);
          break;
        case '%':
          one(Tok::kMod);
          break;
        case '^':
          one(Tok::kPow);
          break;
        case '>':
          one(Tok::kGt);
          break;
        case '<':
          one(Tok::kLt);
          break;
        default:
          return LexError(q, i, std::string("unexpected character: '") + c + "'");
      }
    }
    out.push_back(std::move(t));
  }
}

}  // namespace vigil::query

#include "query/logql.h"

#include <re2/re2.h>

#include <cctype>
#include <string>

#include "query/lexer.h"

namespace vigil::query {
namespace {

class LogQueryParser {
 public:
  explicit LogQueryParser(std::string_view q) : q_(q) {}

  Result<logstore::LogQuery> Parse() {
    logstore::LogQuery out;
    SkipSpace();
    if (!Peek('{')) return Error(Unsupported());
    ++i_;
    VIGIL_RETURN_IF_ERROR(ParseMatchers(&out));
    for (SkipSpace(); i_ < q_.size(); SkipSpace()) {
      VIGIL_RETURN_IF_ERROR(ParseFilter(&out));
    }
    return out;
  }

 private:
  Status ParseMatchers(logstore::LogQuery* out) {
    SkipSpace();
    if (Peek('}')) {
      ++i_;
      return Status::Ok();
    }
    while (true) {
      SkipSpace();
      size_t name_start = i_;
      while (i_ < q_.size() && IsNameChar(q_[i_], i_ == name_start)) ++i_;
      if (i_ == name_start) return Error("expected a label name");
      logstore::LabelMatcher m;
      m.name = std::string(q_.substr(name_start, i_ - name_start));
      SkipSpace();
      if (Consume("=~")) {
        m.type = logstore::MatchType::kRegex;
      } else if (Consume("!~")) {
        m.type = logstore::MatchType::kNotRegex;
      } else if (Consume("!=")) {
        m.type = logstore::MatchType::kNotEqual;
      } else if (Consume("=")) {
        m.type = logstore::MatchType::kEqual;
      } else {
        return Error("expected =, !=, =~ or !~ after label name '" + m.name + "'");
      }
      VIGIL_RETURN_IF_ERROR(ParseString(&m.value));
      if (m.type == logstore::MatchType::kRegex || m.type == logstore::MatchType::kNotRegex) {
        VIGIL_RETURN_IF_ERROR(CheckRegex(m.value));
      }
      out->matchers.push_back(std::move(m));
      SkipSpace();
      if (Consume(",")) continue;
      if (Consume("}")) return Status::Ok();
      return Error("expected ',' or '}' in the stream selector");
    }
  }

  Status ParseFilter(logstore::LogQuery* out) {
    logstore::LineFilter f;
    if (Consume("|=")) {
      f.type = logstore::FilterType::kContains;
    } else if (Consume("|~")) {
      f.type = logstore::FilterType::kRegex;
    } else if (Consume("!=")) {
      f.type = logstore::FilterType::kNotContains;
    } else if (Consume("!~")) {
      f.type = logstore::FilterType::kNotRegex;
    } else if (Peek('|')) {
      return Error(
          "unsupported pipeline stage: Vigil supports the line filters |= != |~ !~ "
          "(parsers such as | json, | logfmt and formatting stages are not supported)");
    } else {
      return Error("expected a line filter (|= != |~ !~)");
    }
    VIGIL_RETURN_IF_ERROR(ParseString(&f.pattern));
    if (f.type == logstore::FilterType::kRegex || f.type == logstore::FilterType::kNotRegex) {
      VIGIL_RETURN_IF_ERROR(CheckRegex(f.pattern));
    }
    out->filters.push_back(std::move(f));
    return Status::Ok();
  }

  Status ParseString(std::string* out) {
    SkipSpace();
    if (i_ >= q_.size() || (q_[i_] != '"' && q_[i_] != '`')) {
      return Error("expected a quoted string (\"...\" or `...`)");
    }
    VIGIL_ASSIGN_OR_RETURN(i_, LexString(q_, i_, out));
    return Status::Ok();
  }

  Status CheckRegex(const std::string& pattern) {
    RE2::Options opts;
    opts.set_log_errors(false);
    RE2 re(pattern, opts);
    if (!re.ok()) return Error("invalid regular expression \"" + pattern + "\": " + re.error());
    return Status::Ok();
  }

  // A metric query (rate(...), count_over_time(...)) or a bare word.
  std::string Unsupported() const {
    if (i_ < q_.size() && std::isalpha(static_cast<unsigned char>(q_[i_]))) {
      return "a log query starts with a stream selector such as {job=\"train\"}; LogQL metric "
             "queries (rate, count_over_time, ...) are not supported: use PromQL for metrics";
    }
    return "a log query starts with a stream selector such as {job=\"train\"}";
  }

  static bool IsNameChar(char c, bool first) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_' ||
           (!first && std::isdigit(static_cast<unsigned char>(c)));
  }
  void SkipSpace() {
    while (i_ < q_.size() && std::isspace(static_cast<unsigned char>(q_[i_]))) ++i_;
  }
  bool Peek(char c) const { return i_ < q_.size() && q_[i_] == c; }
  bool Consume(std::string_view tok) {
    if (q_.substr(i_, tok.size()) != tok) return false;
    i_ += tok.size();
    return true;
  }
  Status Error(const std::string& msg) const {
    return InvalidArgument(PosString(q_, std::min(i_, q_.size())) + ": parse error: " + msg);
  }

  std::string_view q_;
  size_t i_ = 0;
};

}  // namespace

Result<logstore::LogQuery> ParseLogQuery(std::string_view text) {
  return LogQueryParser(text).Parse();
}

Result<logstore::LogQuery> ParseLogSearch(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i == text.size()) return logstore::LogQuery{};
  if (text[i] == '{') return ParseLogQuery(text);
  logstore::LogQuery q;
  size_t end = text.size();
  while (end > i && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  q.filters.push_back({logstore::FilterType::kContains, std::string(text.substr(i, end - i))});
  return q;
}

}  // namespace vigil::query

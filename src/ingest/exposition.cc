#include "ingest/exposition.h"

#include <charconv>
#include <cmath>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/strings.h"

namespace vigil::ingest {

using net::IsNameChar;
using net::IsNameStart;

namespace {

// Parses one line of text exposition. Positions only move forward, and every
// loop consumes input, so hostile lines cost linear time.
class LineParser {
 public:
  LineParser(std::string_view line, const ExpositionLimits& limits) : s_(line), limits_(limits) {}

  bool AtEnd() {
    SkipBlanks();
    return i_ >= s_.size();
  }
  bool IsComment() {
    SkipBlanks();
    return i_ < s_.size() && s_[i_] == '#';
  }

  // "# HELP name text", "# TYPE name type", or any other comment (ignored).
  Status Comment(std::string* keyword, std::string* name, std::string* rest) {
    ++i_;  // '#'
    SkipBlanks();
    *keyword = std::string(Word());
    if (*keyword != "HELP" && *keyword != "TYPE") return Status::Ok();
    SkipBlanks();
    *name = std::string(Name(true));
    if (name->empty()) return InvalidArgument("expected a metric name after # " + *keyword);
    if (i_ < s_.size() && s_[i_] != ' ' && s_[i_] != '\t') {
      return InvalidArgument("invalid character in metric name");
    }
    SkipBlanks();
    if (*keyword == "TYPE") {
      *rest = std::string(Word());
      if (!AtEnd()) return InvalidArgument("unexpected text after the metric type");
      return Status::Ok();
    }
    return Unescape(s_.substr(i_), true, rest);
  }

  Status Sample(ParsedSample* out) {
    SkipBlanks();
    std::string_view name = Name(true);
    if (name.empty()) return InvalidArgument("expected a metric name");
    out->labels.push_back({std::string(wire::kMetricNameLabel), std::string(name)});
    SkipBlanks();
    if (i_ < s_.size() && s_[i_] == '{') VIGIL_RETURN_IF_ERROR(LabelSet(&out->labels));
    SkipBlanks();
    std::string_view value = Word();
    if (value.empty()) return InvalidArgument("expected a value after " + std::string(name));
    auto v = ParseDouble(value);
    if (!v) return InvalidArgument("invalid value \"" + std::string(value.substr(0, 64)) + "\"");
    out->value = *v;
    SkipBlanks();
    std::string_view ts = Word();
    if (!ts.empty()) {
      auto t = ParseInt64(ts);
      if (!t) return InvalidArgument("invalid timestamp \"" + std::string(ts.substr(0, 64)) + "\"");
      out->timestamp_ms = *t;
    }
    if (!AtEnd()) return InvalidArgument("unexpected text after the sample");
    wire::NormalizeLabels(&out->labels);
    return Status::Ok();
  }

 private:
  void SkipBlanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;
  }
  std::string_view Word() {
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ' ' && s_[i_] != '\t') ++i_;
    return s_.substr(start, i_ - start);
  }
  std::string_view Name(bool colon) {
    size_t start = i_;
    if (i_ < s_.size() && IsNameStart(s_[i_], colon)) {
      while (i_ < s_.size() && IsNameChar(s_[i_], colon)) ++i_;
    }
    return s_.substr(start, i_ - start);
  }

  Status LabelSet(wire::Labels* labels) {
    ++i_;  // '{'
    for (;;) {
      SkipBlanks();
      if (i_ >= s_.size()) return InvalidArgument("unterminated label set");
      if (s_[i_] == '}') {
        ++i_;
        return Status::Ok();
      }
      std::string_view lname = Name(false);
      if (lname.empty()) return InvalidArgument("expected a label name");
      for (const auto& l : *labels) {
        if (l.name == lname) return InvalidArgument("duplicate label " + std::string(lname));
      }
      if (labels->size() > limits_.max_labels) return ResourceExhausted("too many labels");
      SkipBlanks();
      if (i_ >= s_.size() || s_[i_] != '=') return InvalidArgument("expected '=' after label name");
      ++i_;
      SkipBlanks();
      if (i_ >= s_.size() || s_[i_] != '"')
        return InvalidArgument("expected '\"' to open a label value");
      ++i_;
      size_t start = i_;
      while (i_ < s_.size() && s_[i_] != '"') i_ += s_[i_] == '\\' ? 2 : 1;
      if (i_ >= s_.size()) return InvalidArgument("unterminated label value");
      std::string value;
      VIGIL_RETURN_IF_ERROR(Unescape(s_.substr(start, i_ - start), false, &value));
      ++i_;  // closing '"'
      if (value.size() > limits_.max_label_bytes) {
        return ResourceExhausted("label value of " + std::string(lname) + " is too long");
      }
      labels->push_back({std::string(lname), std::move(value)});
      SkipBlanks();
      if (i_ < s_.size() && s_[i_] == ',')
        ++i_;
      else if (i_ >= s_.size() || s_[i_] != '}')
        return InvalidArgument("expected ',' or '}'");
    }
  }

  static Status Unescape(std::string_view in, bool help, std::string* out) {
    out->clear();
    for (size_t k = 0; k < in.size(); ++k) {
      if (in[k] != '\\') {
        *out += in[k];
        continue;
      }
      char next = k + 1 < in.size() ? in[k + 1] : '\0';
      if (next == '\\')
        *out += '\\';
      else if (next == 'n')
        *out += '\n';
      else if (next == '"' && !help)
        *out += '"';
      else
        return InvalidArgument("invalid escape sequence");
      ++k;
    }
    return Status::Ok();
  }

  std::string_view s_;
  size_t i_ = 0;
  const ExpositionLimits& limits_;
};

}  // namespace

Result<std::vector<ParsedSample>> ParseExposition(std::string_view text,
                                                  std::vector<ParsedFamily>* families,
                                                  const ExpositionLimits& limits) {
  if (text.size() > limits.max_bytes) {
    return ResourceExhausted("exposition of " + HumanBytes(text.size()) + " is over the limit of " +
                             HumanBytes(limits.max_bytes));
  }
  std::vector<ParsedSample> samples;
  std::vector<ParsedFamily> fams;
  std::unordered_map<std::string, size_t> fam_index;
  std::unordered_set<std::string> has_help, has_type, has_samples;
  size_t pos = 0;
  for (size_t line_no = 1; pos < text.size(); ++line_no) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    auto fail = [&](const Status& st) {
      return Status(st.code(), "line " + std::to_string(line_no) + ": " + st.message());
    };
    if (line.size() > limits.max_line_bytes) return fail(ResourceExhausted("line too long"));
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    LineParser p(line, limits);
    if (p.AtEnd()) continue;
    if (p.IsComment()) {
      std::string keyword, name, rest;
      if (Status st = p.Comment(&keyword, &name, &rest); !st.ok()) return fail(st);
      if (name.empty()) continue;  // a plain comment
      auto [it, inserted] = fam_index.try_emplace(name, fams.size());
      if (inserted) fams.push_back({name, "", ""});
      ParsedFamily& f = fams[it->second];
      if (keyword == "HELP") {
        if (!has_help.insert(name).second) return fail(InvalidArgument("second HELP for " + name));
        f.help = std::move(rest);
        continue;
      }
      if (rest != "counter" && rest != "gauge" && rest != "histogram" && rest != "summary" &&
          rest != "untyped") {
        return fail(InvalidArgument("unknown metric type \"" + rest.substr(0, 32) + "\""));
      }
      if (!has_type.insert(name).second) return fail(InvalidArgument("second TYPE for " + name));
      if (has_samples.count(name))
        return fail(InvalidArgument("TYPE for " + name + " after its samples"));
      f.type = std::move(rest);
      continue;
    }
    if (samples.size() >= limits.max_samples) {
      return fail(
          ResourceExhausted("more than " + std::to_string(limits.max_samples) + " samples"));
    }
    ParsedSample sample;
    if (Status st = p.Sample(&sample); !st.ok()) return fail(st);
    has_samples.insert(std::string(wire::MetricName(sample.labels)));
    samples.push_back(std::move(sample));
  }
  if (families) *families = std::move(fams);
  return samples;
}

}  // namespace vigil::ingest

#include "alert/silence.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "alert/rules.h"
#include "core/strings.h"

namespace vigil::alert {
namespace {

using nlohmann::json;

bool IsRegexOp(MatchOp op) { return op == MatchOp::kRegex || op == MatchOp::kNotRegex; }

std::unique_ptr<RE2> Compile(const std::string& pattern) {
  RE2::Options o;
  o.set_log_errors(false);
  return std::make_unique<RE2>(pattern, o);
}

bool ValidLabelName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    auto c = static_cast<unsigned char>(name[i]);
    if (!(std::isalpha(c) || c == '_' || (i > 0 && std::isdigit(c)))) return false;
  }
  return true;
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

const char* MatchOpText(MatchOp op) {
  switch (op) {
    case MatchOp::kEqual:
      return "=";
    case MatchOp::kNotEqual:
      return "!=";
    case MatchOp::kRegex:
      return "=~";
    case MatchOp::kNotRegex:
      return "!~";
  }
  return "=";
}

Result<Matcher> ParseMatcher(std::string_view text) {
  size_t pos = text.find_first_of("=!");
  auto bad = [&] {
    return InvalidArgument("\"" + std::string(text) +
                           "\" is not a matcher: write name=value, name!=value, name=~regex or "
                           "name!~regex");
  };
  if (pos == std::string_view::npos || pos == 0) return bad();
  Matcher m;
  m.name = std::string(text.substr(0, pos));
  std::string_view rest = text.substr(pos);
  if (StartsWith(rest, "=~")) {
    m.op = MatchOp::kRegex;
    rest.remove_prefix(2);
  } else if (StartsWith(rest, "!~")) {
    m.op = MatchOp::kNotRegex;
    rest.remove_prefix(2);
  } else if (StartsWith(rest, "!=")) {
    m.op = MatchOp::kNotEqual;
    rest.remove_prefix(2);
  } else if (StartsWith(rest, "=")) {
    m.op = MatchOp::kEqual;
    rest.remove_prefix(1);
  } else {
    return bad();
  }
  if (rest.size() >= 2 && rest.front() == '"' && rest.back() == '"') {
    std::string v;
    for (size_t i = 1; i + 1 < rest.size(); ++i) {
      if (rest[i] == '\\' && i + 2 < rest.size()) {
        v += rest[++i];
      } else if (rest[i] == '"') {
        return bad();  // an unescaped quote inside
      } else {
        v += rest[i];
      }
    }
    m.value = std::move(v);
  } else {
    m.value = std::string(rest);
  }
  VIGIL_RETURN_IF_ERROR(ValidateMatcher(m));
  return m;
}

std::string MatcherText(const Matcher& m) { return m.name + MatchOpText(m.op) + Quote(m.value); }

Status ValidateMatcher(const Matcher& m) {
  if (m.name.size() > kMaxMatcherValueBytes || !ValidLabelName(m.name)) {
    return InvalidArgument("\"" + std::string(CutUtf8(m.name, 100)) +
                           "\" is not a label name (letters, digits and _, not starting with a "
                           "digit)");
  }
  if (m.value.size() > kMaxMatcherValueBytes) {
    return InvalidArgument("the value of matcher " + m.name + " is longer than " +
                           std::to_string(kMaxMatcherValueBytes) + " bytes");
  }
  if (IsRegexOp(m.op)) {
    auto re = Compile(m.value);
    if (!re->ok()) {
      return InvalidArgument("the regular expression of matcher " + m.name + " (" +
                             std::string(CutUtf8(m.value, 100)) +
                             ") does not compile: " + re->error());
    }
  }
  return Status::Ok();
}

bool Matches(const Matcher& m, const RE2* re, std::string_view value) {
  switch (m.op) {
    case MatchOp::kEqual:
      return value == m.value;
    case MatchOp::kNotEqual:
      return value != m.value;
    case MatchOp::kRegex:
      return re != nullptr && RE2::FullMatch(value, *re);
    case MatchOp::kNotRegex:
      return re != nullptr && !RE2::FullMatch(value, *re);
  }
  return false;
}

const char* SilenceStateName(SilenceState state) {
  switch (state) {
    case SilenceState::kPending:
      return "pending";
    case SilenceState::kActive:
      return "active";
    case SilenceState::kExpired:
      return "expired";
  }
  return "expired";
}

SilenceState StateAt(const Silence& s, int64_t now_ms) {
  if (now_ms >= s.ends_at_ms) return SilenceState::kExpired;
  if (now_ms < s.starts_at_ms) return SilenceState::kPending;
  return SilenceState::kActive;
}

Status ValidateMatchers(const std::vector<Matcher>& matchers) {
  if (matchers.empty()) return InvalidArgument("a silence needs at least one matcher");
  if (matchers.size() > kMaxSilenceMatchers) {
    return InvalidArgument("a silence has at most " + std::to_string(kMaxSilenceMatchers) +
                           " matchers, not " + std::to_string(matchers.size()));
  }
  bool selective = false;
  for (const Matcher& m : matchers) {
    VIGIL_RETURN_IF_ERROR(ValidateMatcher(m));
    std::unique_ptr<RE2> re = IsRegexOp(m.op) ? Compile(m.value) : nullptr;
    selective |= !Matches(m, re.get(), "");
  }
  if (!selective) {
    return InvalidArgument(
        "at least one matcher must not match the empty string (such as node=\"n1\"): this "
        "silence would mute every alert");
  }
  return Status::Ok();
}

Status ValidateSilence(const Silence& s) {
  VIGIL_RETURN_IF_ERROR(ValidateMatchers(s.matchers));
  if (s.ends_at_ms <= s.starts_at_ms) return InvalidArgument("endsAt must be after startsAt");
  if (s.comment.size() > kMaxSilenceCommentBytes) {
    return InvalidArgument("comment is longer than " + std::to_string(kMaxSilenceCommentBytes) +
                           " bytes");
  }
  if (s.created_by.size() > kMaxSilenceCreatedByBytes) {
    return InvalidArgument("createdBy is longer than " + std::to_string(kMaxSilenceCreatedByBytes) +
                           " bytes");
  }
  return Status::Ok();
}

Result<int64_t> ParseSilenceDuration(std::string_view text) {
  // Bounded before ParseDuration sums it, so the sum cannot overflow: at
  // most 32 characters, no number over 9 digits.
  bool short_numbers = true;
  size_t run = 0;
  for (char c : text) {
    run = std::isdigit(static_cast<unsigned char>(c)) ? run + 1 : 0;
    short_numbers &= run <= 9;
  }
  std::optional<int64_t> ms;
  if (text.size() <= 32 && short_numbers) ms = ParseDuration(text);
  if (!ms) {
    return InvalidArgument("\"" + std::string(CutUtf8(text, 40)) +
                           "\" is not a duration such as \"2h\", \"90m\", \"1h30m\" or \"7d\"");
  }
  if (*ms <= 0) return InvalidArgument("the duration must be more than 0");
  constexpr int64_t kMax = 100LL * 366 * 24 * 3600'000;
  if (*ms > kMax) return InvalidArgument("the duration must be at most 100 years");
  return *ms;
}

std::string NewSilenceId() {
  std::random_device rd;
  uint64_t v = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void WriteMatchers(JsonWriter* w, const std::vector<Matcher>& matchers) {
  w->BeginArray();
  for (const Matcher& m : matchers) {
    w->BeginObject();
    w->Key("name").String(m.name);
    w->Key("value").String(m.value);
    w->Key("isRegex").Bool(IsRegexOp(m.op));
    w->Key("isEqual").Bool(m.op == MatchOp::kEqual || m.op == MatchOp::kRegex);
    w->EndObject();
  }
  w->EndArray();
}

void WriteSilence(JsonWriter* w, const Silence& s, int64_t now_ms) {
  w->BeginObject();
  w->Key("id").String(s.id);
  w->Key("status").BeginObject().Key("state").String(SilenceStateName(StateAt(s, now_ms)));
  w->EndObject();
  w->Key("matchers");
  WriteMatchers(w, s.matchers);
  w->Key("startsAt").String(FormatRfc3339(s.starts_at_ms));
  w->Key("endsAt").String(FormatRfc3339(s.ends_at_ms));
  w->Key("updatedAt").String(FormatRfc3339(s.updated_at_ms));
  w->Key("createdAt").String(FormatRfc3339(s.created_at_ms));
  w->Key("createdBy").String(s.created_by);
  w->Key("comment").String(s.comment);
  w->EndObject();
}

std::string SilenceRecordJson(const Silence& s) {
  JsonWriter w;
  w.BeginObject();
  w.Key("id").String(s.id);
  w.Key("matchers");
  WriteMatchers(&w, s.matchers);
  w.Key("starts_at_ms").Int(s.starts_at_ms);
  w.Key("ends_at_ms").Int(s.ends_at_ms);
  w.Key("created_at_ms").Int(s.created_at_ms);
  w.Key("updated_at_ms").Int(s.updated_at_ms);
  w.Key("created_by").String(s.created_by);
  w.Key("comment").String(s.comment);
  w.EndObject();
  return w.Release();
}

Result<Silence> ParseSilenceRecord(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("silence record is not a JSON object");
  auto str = [&](const json& o, const char* key) -> std::string {
    auto it = o.find(key);
    return it != o.end() && it->is_string() ? it->get<std::string>() : "";
  };
  auto num = [&](const char* key) -> int64_t {
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  };
  auto flag = [](const json& o, const char* key, bool fallback) {
    auto it = o.find(key);
    return it != o.end() && it->is_boolean() ? it->get<bool>() : fallback;
  };
  Silence s;
  s.id = str(j, "id");
  if (s.id.empty()) return InvalidArgument("silence record has no id");
  auto ms = j.find("matchers");
  if (ms == j.end() || !ms->is_array()) return InvalidArgument("silence record has no matchers");
  for (const json& m : *ms) {
    if (!m.is_object()) return InvalidArgument("silence record has a bad matcher");
    Matcher x;
    x.name = str(m, "name");
    x.value = str(m, "value");
    bool regex = flag(m, "isRegex", false), equal = flag(m, "isEqual", true);
    x.op = regex ? (equal ? MatchOp::kRegex : MatchOp::kNotRegex)
                 : (equal ? MatchOp::kEqual : MatchOp::kNotEqual);
    s.matchers.push_back(std::move(x));
  }
  s.starts_at_ms = num("starts_at_ms");
  s.ends_at_ms = num("ends_at_ms");
  s.created_at_ms = num("created_at_ms");
  s.updated_at_ms = num("updated_at_ms");
  s.created_by = str(j, "created_by");
  s.comment = str(j, "comment");
  return s;
}

struct SilenceSet::Entry {
  Silence silence;
  std::vector<std::unique_ptr<RE2>> regexes;  // per matcher; null for = and !=
};

SilenceSet::SilenceSet() = default;
SilenceSet::~SilenceSet() = default;
SilenceSet::SilenceSet(SilenceSet&&) noexcept = default;
SilenceSet& SilenceSet::operator=(SilenceSet&&) noexcept = default;

Status SilenceSet::Put(Silence s) {
  VIGIL_RETURN_IF_ERROR(ValidateMatchers(s.matchers));
  auto e = std::make_unique<Entry>();
  for (const Matcher& m : s.matchers) {
    e->regexes.push_back(IsRegexOp(m.op) ? Compile(m.value) : nullptr);
  }
  std::string id = s.id;
  e->silence = std::move(s);
  entries_[id] = std::move(e);
  return Status::Ok();
}

const Silence* SilenceSet::Find(const std::string& id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second->silence;
}

std::vector<Silence> SilenceSet::All() const {
  std::vector<Silence> out;
  for (const auto& [id, e] : entries_) out.push_back(e->silence);
  std::sort(out.begin(), out.end(), [](const Silence& a, const Silence& b) {
    if (a.created_at_ms != b.created_at_ms) return a.created_at_ms > b.created_at_ms;
    return a.id < b.id;
  });
  return out;
}

size_t SilenceSet::CountUnexpired(int64_t now_ms) const {
  size_t n = 0;
  for (const auto& [id, e] : entries_) n += StateAt(e->silence, now_ms) != SilenceState::kExpired;
  return n;
}

bool SilenceSet::Mutes(const Alert& alert, int64_t now_ms) const {
  for (const auto& [id, e] : entries_) {
    if (StateAt(e->silence, now_ms) != SilenceState::kActive) continue;
    bool all = true;
    for (size_t i = 0; i < e->silence.matchers.size() && all; ++i) {
      const Matcher& m = e->silence.matchers[i];
      all = Matches(m, e->regexes[i].get(), LabelOf(alert, m.name));
    }
    if (all) return true;
  }
  return false;
}

std::set<std::string> SilenceSet::Silenced(const std::map<std::string, Alert>& active,
                                           int64_t now_ms) const {
  std::set<std::string> out;
  if (entries_.empty()) return out;
  for (const auto& [id, a] : active) {
    if (Mutes(a, now_ms)) out.insert(id);
  }
  return out;
}

size_t SilenceSet::Prune(int64_t ended_before_ms) {
  return std::erase_if(
      entries_, [&](const auto& kv) { return kv.second->silence.ends_at_ms < ended_before_ms; });
}

}  // namespace vigil::alert

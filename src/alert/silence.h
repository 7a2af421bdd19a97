// Silences, Alertmanager's model: a person mutes the alerts whose labels
// match a set of matchers, for a time. A silenced alert stays in the list
// (marked) but is not notified; when the silence ends (it expires, or is
// expired early) an alert still firing is notified as a new one
// (dispatch.h).
//
// A matcher is a label name, an operator and a value: `=` and `!=` compare
// the label's value, `=~` and `!~` match it against an RE2 regular
// expression anchored at both ends (as Prometheus and Alertmanager do). A
// label the alert lacks has the value "", so `job!="x"` matches alerts
// without a job. A silence mutes an alert when every matcher matches; at
// least one matcher must not match the empty string, so a silence cannot
// mute every alert there is.
//
// States: pending before `starts_at`, active until `ends_at`, expired after.
// Expired silences are kept (listed) for kSilenceRetentionMs, then pruned.
//
// Thread safety: values, and a SilenceSet used by one thread at a time (the
// engine holds its mutex).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "alert/alert.h"
#include "core/json_writer.h"
#include "core/status.h"

namespace re2 {
class RE2;
}

namespace vigil::alert {

inline constexpr size_t kMaxSilenceMatchers = 32;
inline constexpr size_t kMaxMatcherValueBytes = 1024;  // also for label names
inline constexpr size_t kMaxActiveSilences = 1000;     // active and pending together
inline constexpr size_t kMaxSilenceCommentBytes = 4096;
inline constexpr size_t kMaxSilenceCreatedByBytes = 256;
inline constexpr int64_t kSilenceRetentionMs = 7LL * 24 * 3600'000;

enum class MatchOp { kEqual, kNotEqual, kRegex, kNotRegex };
const char* MatchOpText(MatchOp op);  // "=", "!=", "=~", "!~"

struct Matcher {
  std::string name;
  MatchOp op = MatchOp::kEqual;
  std::string value;
  bool operator==(const Matcher&) const = default;
};

// "name=value", "name!=value", "name=~regex", "name!~regex" (amtool's and
// `vigil silence add`'s form). A value in double quotes is unquoted (\" and
// \\ escapes). InvalidArgument for anything else; the matcher itself is
// checked by ValidateMatcher.
Result<Matcher> ParseMatcher(std::string_view text);
// `node="gpu-07"`, `alertname=~"gpu_.*"`: the value quoted, as PromQL writes it.
std::string MatcherText(const Matcher& m);

// A label name ([a-zA-Z_][a-zA-Z0-9_]*), a value of at most
// kMaxMatcherValueBytes, a regular expression RE2 compiles.
Status ValidateMatcher(const Matcher& m);

// Whether `m` matches `value` (a label's value, "" when the label is absent).
// `re` is the compiled regex of a =~ or !~ matcher.
bool Matches(const Matcher& m, const re2::RE2* re, std::string_view value);

struct Silence {
  std::string id;  // 16 lowercase hex digits, random
  std::vector<Matcher> matchers;
  int64_t starts_at_ms = 0;
  int64_t ends_at_ms = 0;
  std::string created_by;
  std::string comment;
  int64_t created_at_ms = 0;
  int64_t updated_at_ms = 0;
  bool operator==(const Silence&) const = default;
};

enum class SilenceState { kPending, kActive, kExpired };
const char* SilenceStateName(SilenceState state);  // "pending", "active", "expired"
SilenceState StateAt(const Silence& s, int64_t now_ms);

// 1 to kMaxSilenceMatchers valid matchers, one of which does not match "".
Status ValidateMatchers(const std::vector<Matcher>& matchers);
// A new silence: ValidateMatchers, the bounds above, and ends_at after
// starts_at. InvalidArgument says what is wrong.
Status ValidateSilence(const Silence& s);

// "2h", "90m", "1h30m", "7d" -> milliseconds; InvalidArgument when malformed,
// not positive, or absurdly long.
Result<int64_t> ParseSilenceDuration(std::string_view text);

// 16 random lowercase hex digits.
std::string NewSilenceId();

// Alertmanager's API v2 shape (GettableSilence), with Vigil's createdAt:
//   {"id": "...", "status": {"state": "active"},
//    "matchers": [{"name": "node", "value": "n1", "isRegex": false, "isEqual": true}],
//    "startsAt": RFC3339, "endsAt": RFC3339, "updatedAt": RFC3339,
//    "createdAt": RFC3339, "createdBy": "...", "comment": "..."}
void WriteSilence(JsonWriter* w, const Silence& s, int64_t now_ms);
// The matchers as Alertmanager writes them (one object each).
void WriteMatchers(JsonWriter* w, const std::vector<Matcher>& matchers);

// The store's form: the same fields, times in Unix ms.
std::string SilenceRecordJson(const Silence& s);
Result<Silence> ParseSilenceRecord(std::string_view json);

// The silences in effect, with their regular expressions compiled once.
class SilenceSet {
 public:
  SilenceSet();
  ~SilenceSet();
  SilenceSet(SilenceSet&&) noexcept;
  SilenceSet& operator=(SilenceSet&&) noexcept;

  // Adds `s` or replaces the one with its id. InvalidArgument when
  // ValidateMatchers refuses its matchers.
  Status Put(Silence s);
  const Silence* Find(const std::string& id) const;
  // Every silence, newest (created) first.
  std::vector<Silence> All() const;
  // Active and pending ones at `now_ms`.
  size_t CountUnexpired(int64_t now_ms) const;

  // Whether an active silence mutes `alert` at `now_ms`.
  bool Mutes(const Alert& alert, int64_t now_ms) const;
  // The ids of the `active` alerts an active silence mutes at `now_ms`.
  std::set<std::string> Silenced(const std::map<std::string, Alert>& active, int64_t now_ms) const;
  // Drops the silences that ended before `ended_before_ms`; returns how many.
  size_t Prune(int64_t ended_before_ms);
  size_t size() const { return entries_.size(); }

 private:
  struct Entry;
  std::map<std::string, std::unique_ptr<Entry>> entries_;
};

}  // namespace vigil::alert

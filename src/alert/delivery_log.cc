#include "alert/delivery_log.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstring>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>

#include "alert/alert_json.h"
#include "core/json_writer.h"
#include "core/strings.h"
#include "store/common/sqlite.h"

namespace vigil::alert {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  receiver TEXT NOT NULL,
  group_key TEXT NOT NULL,
  alert_ids TEXT NOT NULL,
  payload TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  next_attempt_ms INTEGER NOT NULL,
  state TEXT NOT NULL,
  last_answer TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS deliveries_pending ON deliveries (state, next_attempt_ms);
CREATE INDEX IF NOT EXISTS deliveries_by_group ON deliveries (group_key, state);
)sql";

constexpr const char* kColumns =
    "id, receiver, group_key, alert_ids, payload, created_ms, updated_ms, attempts, "
    "next_attempt_ms, state, last_answer";

// splitmix64: a well-spread hash for the jitter, so a schedule is
// reproducible (tests) yet entries that failed together spread apart.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

DeliveryEntry ReadEntry(const store::SqliteStmt& s) {
  DeliveryEntry e;
  e.id = s.ColumnInt64(0);
  e.receiver = std::string(s.ColumnText(1));
  e.group_key = std::string(s.ColumnText(2));
  auto ids = nlohmann::json::parse(s.ColumnText(3), nullptr, false);
  if (ids.is_array()) {
    for (const auto& id : ids) {
      if (id.is_string()) e.alert_ids.push_back(id.get<std::string>());
    }
  }
  // A payload this version cannot read leaves the notification empty; the
  // engine fails such an entry rather than sending nothing.
  auto n = ParseNotification(s.ColumnText(4));
  if (n.ok()) e.notification = std::move(n).value();
  e.created_ms = s.ColumnInt64(5);
  e.updated_ms = s.ColumnInt64(6);
  e.attempts = s.ColumnInt64(7);
  e.next_attempt_ms = s.ColumnInt64(8);
  e.state = ParseDeliveryState(s.ColumnText(9)).value_or(DeliveryState::kFailed);
  e.last_answer = std::string(s.ColumnText(10));
  return e;
}

Result<std::vector<DeliveryEntry>> ReadEntries(store::SqliteStmt* stmt) {
  std::vector<DeliveryEntry> out;
  Status st;
  while (stmt->Step(&st)) out.push_back(ReadEntry(*stmt));
  if (!st.ok()) return st;
  return out;
}

}  // namespace

const char* DeliveryStateName(DeliveryState s) {
  switch (s) {
    case DeliveryState::kPending:
      return "pending";
    case DeliveryState::kDelivered:
      return "delivered";
    case DeliveryState::kFailed:
      return "failed";
    case DeliveryState::kCapped:
      return "capped";
    case DeliveryState::kSuperseded:
      return "superseded";
  }
  return "failed";
}

std::optional<DeliveryState> ParseDeliveryState(std::string_view s) {
  for (DeliveryState d :
       {DeliveryState::kPending, DeliveryState::kDelivered, DeliveryState::kFailed,
        DeliveryState::kCapped, DeliveryState::kSuperseded}) {
    if (s == DeliveryStateName(d)) return d;
  }
  return std::nullopt;
}

std::string NotificationJson(const Notification& n) {
  JsonWriter w;
  w.BeginObject();
  w.Key("receiver").String(n.receiver);
  w.Key("group_key").String(n.group_key);
  w.Key("group_labels");
  WriteLabels(&w, n.group_labels);
  w.Key("external_url").String(n.external_url);
  w.Key("alerts").BeginArray();
  for (const Alert& a : n.alerts) WriteAlert(&w, a);
  w.EndArray();
  w.EndObject();
  return w.Release();
}

Result<Notification> ParseNotification(std::string_view json) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object()) return InvalidArgument("a notification is a JSON object");
  Notification n;
  n.receiver = j.value("receiver", "");
  n.group_key = j.value("group_key", "");
  n.external_url = j.value("external_url", "");
  if (j.contains("group_labels") && j["group_labels"].is_object()) {
    for (const auto& [k, v] : j["group_labels"].items()) {
      if (v.is_string()) n.group_labels.push_back({k, v.get<std::string>()});
    }
  }
  if (!j.contains("alerts") || !j["alerts"].is_array()) {
    return InvalidArgument("a notification has alerts");
  }
  for (const auto& a : j["alerts"]) {
    auto alert = ParseAlert(a.dump());
    if (!alert.ok()) return alert.status();
    n.alerts.push_back(std::move(alert).value());
  }
  return n;
}

Result<std::unique_ptr<DeliveryLog>> DeliveryLog::Open(store::SqliteDb* db,
                                                       DeliveryLogOptions options) {
  VIGIL_RETURN_IF_ERROR(db->Exec(kSchema));
  return std::unique_ptr<DeliveryLog>(new DeliveryLog(db, options));
}

int64_t DeliveryLog::Backoff(int64_t id, int64_t attempts) const {
  const int64_t cap = std::max<int64_t>(1, options_.max_backoff_ms);
  int64_t base = std::max<int64_t>(1, options_.initial_backoff_ms);
  for (int64_t i = 1; i < attempts && base < cap; ++i) base *= 2;
  base = std::min(base, cap);
  // ±20%: uniform in [0.8, 1.2) of the base, never past the cap.
  const double u =
      static_cast<double>(
          Mix(static_cast<uint64_t>(id) * 1'000'003ULL + static_cast<uint64_t>(attempts)) >> 11) /
      static_cast<double>(1ULL << 53);
  const auto jittered = static_cast<int64_t>(static_cast<double>(base) * (0.8 + 0.4 * u));
  return std::clamp<int64_t>(jittered, 1, cap);
}

Result<std::vector<int64_t>> DeliveryLog::Supersede(Notification* n,
                                                    const std::set<int64_t>& in_flight) {
  auto stmt =
      db_->Prepare("SELECT id, payload FROM deliveries WHERE group_key = ?1 AND state = 'pending'");
  if (!stmt.ok()) return stmt.status();
  stmt->BindText(1, n->group_key);
  std::set<std::string> known;
  for (const Alert& a : n->alerts) known.insert(a.id);
  std::vector<int64_t> ids;
  Status st;
  while (stmt->Step(&st)) {
    if (in_flight.count(stmt->ColumnInt64(0)) != 0) continue;
    ids.push_back(stmt->ColumnInt64(0));
    auto old = ParseNotification(stmt->ColumnText(1));
    if (!old.ok()) continue;
    // Its firing alerts are in `n` or resolved since; its resolutions may
    // be the only word of them.
    for (Alert& a : old->alerts) {
      if (a.state == AlertState::kResolved && known.insert(a.id).second) {
        n->alerts.push_back(std::move(a));
      }
    }
  }
  if (!st.ok()) return st;
  return ids;
}

Result<int64_t> DeliveryLog::Add(Notification n, int64_t now_ms,
                                 const std::set<int64_t>& in_flight) {
  auto older = Supersede(&n, in_flight);
  if (!older.ok()) return older.status();
  nlohmann::json ids = nlohmann::json::array();
  for (const Alert& a : n.alerts) ids.push_back(a.id);
  auto stmt = db_->Prepare(
      "INSERT INTO deliveries (receiver, group_key, alert_ids, payload, created_ms, updated_ms, "
      "attempts, next_attempt_ms, state, last_answer) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?5, 0, ?5, 'pending', '')");
  if (!stmt.ok()) return stmt.status();
  const std::string ids_text = ids.dump(), payload = NotificationJson(n);
  stmt->BindText(1, n.receiver);
  stmt->BindText(2, n.group_key);
  stmt->BindText(3, ids_text);
  stmt->BindText(4, payload);
  stmt->BindInt64(5, now_ms);
  VIGIL_RETURN_IF_ERROR(stmt->Run());
  auto last = db_->Prepare("SELECT last_insert_rowid()");
  if (!last.ok()) return last.status();
  Status st;
  if (!last->Step(&st)) return st.ok() ? Internal("no rowid after an insert") : st;
  const int64_t id = last->ColumnInt64(0);
  for (int64_t old : *older) {
    auto mark = db_->Prepare(
        "UPDATE deliveries SET state = 'superseded', updated_ms = ?2, last_answer = ?3 WHERE id "
        "= ?1");
    if (!mark.ok()) return mark.status();
    mark->BindInt64(1, old);
    mark->BindInt64(2, now_ms);
    const std::string why = "superseded by entry " + std::to_string(id);
    mark->BindText(3, why);
    VIGIL_RETURN_IF_ERROR(mark->Run());
  }
  return id;
}

Notification MergeNotifications(const std::vector<DeliveryEntry>& entries) {
  Notification out;
  if (entries.empty()) return out;
  out.receiver = entries.front().receiver;
  out.external_url = entries.front().notification.external_url;
  out.group_labels = entries.front().notification.group_labels;
  std::set<std::string> seen;
  for (const DeliveryEntry& e : entries) {
    std::erase_if(out.group_labels, [&](const wire::Label& l) {
      return std::find(e.notification.group_labels.begin(), e.notification.group_labels.end(), l) ==
             e.notification.group_labels.end();
    });
    for (const Alert& a : e.notification.alerts) {
      if (seen.insert(a.id).second) out.alerts.push_back(a);
    }
  }
  out.group_key = out.receiver + ":merged:" + std::to_string(entries.size());
  return out;
}

// Pending entries next in their group (no older pending one of the same
// group key), oldest first: `extra` narrows them (?1), `limit` is ?2.
Result<std::vector<DeliveryEntry>> DeliveryLog::Heads(
    const char* extra, const std::function<void(store::SqliteStmt*)>& bind, size_t limit) const {
  auto stmt = db_->Prepare(std::string("SELECT ") + kColumns +
                           " FROM deliveries d WHERE state = 'pending' AND " + extra +
                           " AND NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.group_key = "
                           "d.group_key AND o.state = 'pending' AND o.id < d.id) "
                           "ORDER BY id LIMIT ?2");
  if (!stmt.ok()) return stmt.status();
  bind(&*stmt);
  stmt->BindInt64(2, static_cast<int64_t>(limit));
  return ReadEntries(&*stmt);
}

Result<std::vector<DeliveryEntry>> DeliveryLog::Due(int64_t now_ms, size_t limit) const {
  return Heads(
      "next_attempt_ms <= ?1", [&](store::SqliteStmt* s) { s->BindInt64(1, now_ms); }, limit);
}

Result<std::vector<DeliveryEntry>> DeliveryLog::Waiting(const std::string& receiver,
                                                        size_t limit) const {
  return Heads(
      "receiver = ?1", [&](store::SqliteStmt* s) { s->BindText(1, receiver); }, limit);
}

Status DeliveryLog::Claim(int64_t id, int64_t now_ms) {
  auto read = db_->Prepare("SELECT attempts FROM deliveries WHERE id = ?1 AND state = 'pending'");
  if (!read.ok()) return read.status();
  read->BindInt64(1, id);
  Status st;
  if (!read->Step(&st)) return st.ok() ? NotFound("no pending delivery " + std::to_string(id)) : st;
  const int64_t attempts = read->ColumnInt64(0) + 1;
  auto stmt = db_->Prepare(
      "UPDATE deliveries SET attempts = ?2, next_attempt_ms = ?3, updated_ms = ?4 WHERE id = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->BindInt64(1, id);
  stmt->BindInt64(2, attempts);
  stmt->BindInt64(3, now_ms + Backoff(id, attempts));
  stmt->BindInt64(4, now_ms);
  return stmt->Run();
}

Status DeliveryLog::Finish(int64_t id, const Status& outcome, int64_t now_ms) {
  // A refusal past the max age fails the entry; the next attempt's time was
  // set by Claim. The answer keeps URLs' scheme and host only (RedactUrls):
  // no secret reaches the log.
  const char* sql =
      outcome.ok() ? "UPDATE deliveries SET state = 'delivered', updated_ms = ?2, last_answer = ?3 "
                     "WHERE id = ?1 AND state = 'pending'"
      : outcome.code() == StatusCode::kResourceExhausted
          ? "UPDATE deliveries SET state = 'capped', updated_ms = ?2, last_answer = ?3 "
            "WHERE id = ?1 AND state = 'pending'"
          : "UPDATE deliveries SET updated_ms = ?2, last_answer = ?3, state = CASE WHEN ?2 - "
            "created_ms >= ?4 THEN 'failed' ELSE 'pending' END WHERE id = ?1 AND state = "
            "'pending'";
  auto stmt = db_->Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  const std::string answer =
      outcome.ok() ? "" : std::string(CutUtf8(RedactUrls(outcome.ToString()), kMaxAnswerBytes));
  stmt->BindInt64(1, id);
  stmt->BindInt64(2, now_ms);
  stmt->BindText(3, answer);
  if (!outcome.ok() && outcome.code() != StatusCode::kResourceExhausted) {
    stmt->BindInt64(4, options_.max_age_ms);
  }
  VIGIL_RETURN_IF_ERROR(stmt->Run());
  return Trim(now_ms);
}

Status DeliveryLog::Abandon(int64_t id, const std::string& why, int64_t now_ms) {
  auto stmt = db_->Prepare(
      "UPDATE deliveries SET state = 'failed', updated_ms = ?2, last_answer = ?3 WHERE id = ?1 "
      "AND state = 'pending'");
  if (!stmt.ok()) return stmt.status();
  stmt->BindInt64(1, id);
  stmt->BindInt64(2, now_ms);
  const std::string redacted = RedactUrls(why);
  stmt->BindText(3, CutUtf8(redacted, kMaxAnswerBytes));
  return stmt->Run();
}

Result<int64_t> DeliveryLog::NextAttemptMs() const {
  auto stmt = db_->Prepare("SELECT MIN(next_attempt_ms) FROM deliveries WHERE state = 'pending'");
  if (!stmt.ok()) return stmt.status();
  Status st;
  if (!stmt->Step(&st)) return st.ok() ? INT64_MAX : Result<int64_t>(st);
  return stmt->ColumnIsNull(0) ? INT64_MAX : stmt->ColumnInt64(0);
}

Status DeliveryLog::Trim(int64_t now_ms) {
  auto old = db_->Prepare("DELETE FROM deliveries WHERE state != 'pending' AND updated_ms < ?1");
  if (!old.ok()) return old.status();
  old->BindInt64(1, now_ms - options_.retention_ms);
  VIGIL_RETURN_IF_ERROR(old->Run());
  auto over = db_->Prepare(
      "DELETE FROM deliveries WHERE state != 'pending' AND id NOT IN (SELECT id FROM deliveries "
      "WHERE state != 'pending' ORDER BY id DESC LIMIT ?1)");
  if (!over.ok()) return over.status();
  over->BindInt64(1, static_cast<int64_t>(options_.max_finished));
  return over->Run();
}

Result<std::vector<DeliveryEntry>> DeliveryLog::List(const DeliveryFilter& filter) const {
  auto stmt = db_->Prepare(std::string("SELECT ") + kColumns +
                           " FROM deliveries WHERE (?1 = '' OR state = ?1) AND (?2 = '' OR "
                           "receiver = ?2) ORDER BY id DESC LIMIT ?3");
  if (!stmt.ok()) return stmt.status();
  stmt->BindText(1, filter.state ? DeliveryStateName(*filter.state) : "");
  stmt->BindText(2, filter.receiver);
  stmt->BindInt64(3, static_cast<int64_t>(filter.limit));
  return ReadEntries(&*stmt);
}

Result<DeliverySummary> DeliveryLog::Summary() const {
  DeliverySummary out;
  auto counts =
      db_->Prepare("SELECT receiver, state, COUNT(*) FROM deliveries GROUP BY receiver, state");
  if (!counts.ok()) return counts.status();
  Status st;
  while (counts->Step(&st)) {
    auto state = ParseDeliveryState(counts->ColumnText(1));
    if (!state) continue;
    const int64_t n = counts->ColumnInt64(2);
    out.counts[*state] += n;
    out.channels[std::string(counts->ColumnText(0))].counts[*state] += n;
  }
  if (!st.ok()) return st;
  // Each channel's newest attempt with an answer, and its newest delivery:
  // failing when the refusal is the newer and something is left undone.
  auto last = db_->Prepare(
      "SELECT receiver, MAX(CASE WHEN last_answer != '' AND attempts > 0 AND state IN ('pending', "
      "'failed') THEN updated_ms END), "
      "MAX(CASE WHEN state = 'delivered' THEN updated_ms END) FROM deliveries GROUP BY receiver");
  if (!last.ok()) return last.status();
  while (last->Step(&st)) {
    ChannelDeliveries& c = out.channels[std::string(last->ColumnText(0))];
    c.last_error_ms = last->ColumnIsNull(1) ? 0 : last->ColumnInt64(1);
    c.last_delivered_ms = last->ColumnIsNull(2) ? 0 : last->ColumnInt64(2);
  }
  if (!st.ok()) return st;
  for (auto& [name, c] : out.channels) {
    if (c.last_error_ms == 0) continue;
    auto answer = db_->Prepare(
        "SELECT last_answer FROM deliveries WHERE receiver = ?1 AND last_answer != '' AND "
        "attempts > 0 AND state IN ('pending', 'failed') ORDER BY updated_ms DESC, id DESC "
        "LIMIT 1");
    if (!answer.ok()) return answer.status();
    answer->BindText(1, name);
    if (answer->Step(&st)) c.last_error = std::string(answer->ColumnText(0));
    if (!st.ok()) return st;
    const bool undone =
        c.counts[DeliveryState::kPending] > 0 || c.counts[DeliveryState::kFailed] > 0;
    c.failing = undone && c.last_error_ms >= c.last_delivered_ms;
  }
  return out;
}

}  // namespace vigil::alert

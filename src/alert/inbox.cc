#include "alert/inbox.h"

#include <algorithm>

#include "alert/alert_json.h"
#include "core/strings.h"
#include "store/common/sqlite.h"

namespace vigil::alert {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS inbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  alert_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  at_ms INTEGER NOT NULL,
  severity TEXT NOT NULL,
  recipients TEXT NOT NULL,
  alert TEXT NOT NULL,
  note TEXT NOT NULL,
  UNIQUE (alert_id, kind, at_ms));
CREATE TABLE IF NOT EXISTS inbox_read (
  item_id INTEGER NOT NULL,
  recipient TEXT NOT NULL,
  PRIMARY KEY (item_id, recipient)) WITHOUT ROWID;
)sql";

// Items of recipient ?1's view: theirs and everyone's ("" sees all). The
// recipients column is ",a,b," so one name matches whole.
constexpr const char* kInView =
    "(?1 = '' OR recipients = '' OR instr(recipients, ',' || ?1 || ',') > 0)";

std::string JoinRecipients(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  std::string out = ",";
  for (const std::string& n : names) out += n + ",";
  return out;
}

std::vector<std::string> SplitRecipients(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 1;
  while (i < s.size()) {
    size_t comma = s.find(',', i);
    if (comma == std::string_view::npos) break;
    out.emplace_back(s.substr(i, comma - i));
    i = comma + 1;
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Inbox>> Inbox::Open(store::SqliteDb* db, InboxOptions options,
                                           std::vector<Recipient> recipients) {
  VIGIL_RETURN_IF_ERROR(db->Exec(kSchema));
  return std::unique_ptr<Inbox>(new Inbox(db, options, std::move(recipients)));
}

Status Inbox::Insert(const Alert& a, const std::string& kind, int64_t at_ms,
                     const std::string& note, bool* added) {
  auto stmt = db_->Prepare(
      "INSERT OR IGNORE INTO inbox (alert_id, kind, at_ms, severity, recipients, alert, note) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  if (!stmt.ok()) return stmt.status();
  const std::string recipients =
      recipients_.empty() ? "" : JoinRecipients(RecipientsOf(a, recipients_));
  const std::string json = AlertJson(a);
  stmt->BindText(1, a.id);
  stmt->BindText(2, kind);
  stmt->BindInt64(3, at_ms);
  stmt->BindText(4, SeverityName(a.severity));
  stmt->BindText(5, recipients);
  stmt->BindText(6, json);
  stmt->BindText(7, CutUtf8(note, kMaxNoteBytes));
  VIGIL_RETURN_IF_ERROR(stmt->Run());
  *added = db_->Changes() > 0;
  return Status::Ok();
}

Result<int> Inbox::Add(const Notification& n, int64_t now_ms) {
  int added = 0;
  for (const Alert& a : n.alerts) {
    bool is_new = false;
    if (a.state == AlertState::kFiring) {
      VIGIL_RETURN_IF_ERROR(Insert(a, "firing", a.fired_at_ms, "", &is_new));
    } else if (a.state == AlertState::kResolved) {
      VIGIL_RETURN_IF_ERROR(Insert(a, "resolved", a.resolved_at_ms, "", &is_new));
    }
    added += is_new ? 1 : 0;
  }
  if (added > 0) VIGIL_RETURN_IF_ERROR(Trim(now_ms));
  return added;
}

Status Inbox::AddHeldBack(const Notification& n, const std::string& why, int64_t now_ms) {
  const std::string note = n.receiver + ": " + why;
  for (const Alert& a : n.alerts) {
    bool added = false;
    VIGIL_RETURN_IF_ERROR(Insert(a, "held_back", now_ms, note, &added));
  }
  return Trim(now_ms);
}

Status Inbox::Trim(int64_t now_ms) {
  auto old = db_->Prepare("DELETE FROM inbox WHERE at_ms < ?1");
  if (!old.ok()) return old.status();
  old->BindInt64(1, now_ms - options_.retention_ms);
  VIGIL_RETURN_IF_ERROR(old->Run());
  auto over = db_->Prepare(
      "DELETE FROM inbox WHERE id NOT IN (SELECT id FROM inbox ORDER BY id DESC LIMIT ?1)");
  if (!over.ok()) return over.status();
  over->BindInt64(1, static_cast<int64_t>(options_.max_items));
  VIGIL_RETURN_IF_ERROR(over->Run());
  // Read marks of items gone with them.
  return db_->Exec("DELETE FROM inbox_read WHERE item_id NOT IN (SELECT id FROM inbox)");
}

Result<std::vector<InboxItem>> Inbox::List(const InboxFilter& filter) const {
  auto stmt = db_->Prepare(
      std::string("SELECT i.id, i.kind, i.at_ms, i.recipients, i.alert, i.note, r.item_id IS NOT "
                  "NULL FROM inbox i LEFT JOIN inbox_read r ON r.item_id = i.id AND r.recipient "
                  "= ?1 WHERE ") +
      kInView +
      " AND (?2 = '' OR i.severity = ?2) AND (?3 = 0 OR r.item_id IS NULL) AND (?4 = 0 OR i.id "
      "< ?4) ORDER BY i.id DESC LIMIT ?5");
  if (!stmt.ok()) return stmt.status();
  stmt->BindText(1, filter.recipient);
  stmt->BindText(2, filter.severity ? SeverityName(*filter.severity) : "");
  stmt->BindInt64(3, filter.unread_only ? 1 : 0);
  stmt->BindInt64(4, filter.before_id);
  stmt->BindInt64(5, static_cast<int64_t>(std::min(filter.limit, kMaxListed)));
  std::vector<InboxItem> out;
  Status st;
  while (stmt->Step(&st)) {
    auto alert = ParseAlert(stmt->ColumnText(4));
    if (!alert.ok()) continue;  // written by a version this one cannot read
    InboxItem item;
    item.id = stmt->ColumnInt64(0);
    item.kind = std::string(stmt->ColumnText(1));
    item.at_ms = stmt->ColumnInt64(2);
    item.recipients = SplitRecipients(stmt->ColumnText(3));
    item.alert = std::move(alert).value();
    item.note = std::string(stmt->ColumnText(5));
    item.read = stmt->ColumnInt64(6) != 0;
    out.push_back(std::move(item));
  }
  if (!st.ok()) return st;
  return out;
}

Result<InboxCounts> Inbox::Counts(const std::string& recipient) const {
  auto stmt = db_->Prepare(
      std::string("SELECT i.severity, COUNT(*), SUM(r.item_id IS NULL) FROM inbox i LEFT JOIN "
                  "inbox_read r ON r.item_id = i.id AND r.recipient = ?1 WHERE ") +
      kInView + " GROUP BY i.severity");
  if (!stmt.ok()) return stmt.status();
  stmt->BindText(1, recipient);
  InboxCounts out;
  Status st;
  while (stmt->Step(&st)) {
    const int64_t total = stmt->ColumnInt64(1), unread = stmt->ColumnInt64(2);
    out.total += total;
    out.unread += unread;
    if (auto sev = ParseSeverity(stmt->ColumnText(0)); sev && unread > 0) {
      out.unread_by_severity[*sev] = unread;
    }
  }
  if (!st.ok()) return st;
  return out;
}

Result<int64_t> Inbox::Mark(const std::string& recipient, const std::vector<int64_t>& ids,
                            bool read) {
  const std::string sql =
      read ? std::string(
                 "INSERT OR IGNORE INTO inbox_read (item_id, recipient) SELECT id, ?1 FROM "
                 "inbox WHERE ") +
                 kInView + " AND (?2 = 0 OR id = ?2)"
           : "DELETE FROM inbox_read WHERE recipient = ?1 AND (?2 = 0 OR item_id = ?2)";
  int64_t changed = 0;
  auto run = [&](int64_t id) -> Status {
    auto stmt = db_->Prepare(sql);
    if (!stmt.ok()) return stmt.status();
    stmt->BindText(1, recipient);
    stmt->BindInt64(2, id);
    VIGIL_RETURN_IF_ERROR(stmt->Run());
    changed += db_->Changes();
    return Status::Ok();
  };
  if (ids.empty()) {
    VIGIL_RETURN_IF_ERROR(run(0));
  } else {
    for (int64_t id : ids) {
      if (id > 0) VIGIL_RETURN_IF_ERROR(run(id));
    }
  }
  return changed;
}

}  // namespace vigil::alert

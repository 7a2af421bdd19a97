#include "alert/alert_store.h"

#include <nlohmann/json.hpp>

#include "alert/alert_json.h"
#include "store/common/sqlite.h"

namespace vigil::alert {

namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS alerts (
  id TEXT NOT NULL,
  active_at_ms INTEGER NOT NULL,
  state TEXT NOT NULL,
  updated_ms INTEGER NOT NULL,
  body TEXT NOT NULL,
  PRIMARY KEY (id, active_at_ms));
CREATE INDEX IF NOT EXISTS alerts_by_state ON alerts (state, updated_ms);
CREATE TABLE IF NOT EXISTS alert_groups (
  key TEXT PRIMARY KEY,
  last_sent_ms INTEGER NOT NULL,
  sent_firing TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS silences (
  id TEXT PRIMARY KEY,
  ends_at_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  body TEXT NOT NULL);
)sql";

Result<std::vector<Alert>> ReadAlerts(store::SqliteDb* db, const std::string& sql, int64_t limit) {
  auto stmt = db->Prepare(sql);
  if (!stmt.ok()) return stmt.status();
  if (limit >= 0) stmt->BindInt64(1, limit);
  std::vector<Alert> out;
  Status st;
  while (stmt->Step(&st)) {
    // A row this version cannot read is skipped, not fatal: the rest of the
    // state still restores.
    auto a = ParseAlert(stmt->ColumnText(0));
    if (a.ok()) out.push_back(std::move(a).value());
  }
  if (!st.ok()) return st;
  return out;
}

}  // namespace

AlertStore::AlertStore(AlertStoreOptions options, std::unique_ptr<store::SqliteDb> db)
    : options_(std::move(options)), db_(std::move(db)) {}

AlertStore::~AlertStore() = default;

Result<std::unique_ptr<AlertStore>> AlertStore::Open(AlertStoreOptions options) {
  std::string path = options.path.empty() ? ":memory:" : options.path;
  auto db = store::SqliteDb::Open(path);
  if (!db.ok()) return db.status().WithContext("cannot open the alert store " + path);
  VIGIL_RETURN_IF_ERROR((*db)->Exec(kSchema));
  return std::unique_ptr<AlertStore>(new AlertStore(std::move(options), std::move(db).value()));
}

Status AlertStore::Save(const std::vector<Alert>& alerts, int64_t now_ms) {
  if (alerts.empty()) return Status::Ok();
  store::SqliteTxn txn(db_.get());
  VIGIL_RETURN_IF_ERROR(txn.Begin());
  auto stmt = db_->Prepare(
      "INSERT INTO alerts (id, active_at_ms, state, updated_ms, body) VALUES (?1, ?2, ?3, ?4, ?5) "
      "ON CONFLICT (id, active_at_ms) DO UPDATE SET state = ?3, updated_ms = ?4, body = ?5");
  if (!stmt.ok()) return stmt.status();
  for (const Alert& a : alerts) {
    std::string body = AlertJson(a);
    stmt->BindText(1, a.id);
    stmt->BindInt64(2, a.active_at_ms);
    stmt->BindText(3, AlertStateName(a.state));
    stmt->BindInt64(4, now_ms);
    stmt->BindText(5, body);
    VIGIL_RETURN_IF_ERROR(stmt->Run());
    stmt->Reset();
  }
  VIGIL_RETURN_IF_ERROR(Trim(now_ms));
  return txn.Commit();
}

Status AlertStore::Trim(int64_t now_ms) {
  auto old = db_->Prepare("DELETE FROM alerts WHERE state = 'resolved' AND updated_ms < ?1");
  if (!old.ok()) return old.status();
  old->BindInt64(1, now_ms - options_.history_retention_ms);
  VIGIL_RETURN_IF_ERROR(old->Run());
  auto over = db_->Prepare(
      "DELETE FROM alerts WHERE state = 'resolved' AND rowid NOT IN (SELECT rowid FROM alerts "
      "WHERE state = 'resolved' ORDER BY updated_ms DESC LIMIT ?1)");
  if (!over.ok()) return over.status();
  over->BindInt64(1, static_cast<int64_t>(options_.max_history));
  return over->Run();
}

Result<std::vector<Alert>> AlertStore::Active() const {
  return ReadAlerts(db_.get(), "SELECT body FROM alerts WHERE state != 'resolved'", -1);
}

Result<std::vector<Alert>> AlertStore::History(size_t limit) const {
  return ReadAlerts(db_.get(),
                    "SELECT body FROM alerts WHERE state = 'resolved' ORDER BY updated_ms DESC "
                    "LIMIT ?1",
                    static_cast<int64_t>(limit));
}

Status AlertStore::SaveGroup(const GroupRecord& group) {
  nlohmann::json ids = nlohmann::json::array();
  for (const std::string& id : group.sent_firing) ids.push_back(id);
  auto stmt = db_->Prepare(
      "INSERT INTO alert_groups (key, last_sent_ms, sent_firing) VALUES (?1, ?2, ?3) "
      "ON CONFLICT (key) DO UPDATE SET last_sent_ms = ?2, sent_firing = ?3");
  if (!stmt.ok()) return stmt.status();
  std::string text = ids.dump();
  stmt->BindText(1, group.key);
  stmt->BindInt64(2, group.last_sent_ms);
  stmt->BindText(3, text);
  return stmt->Run();
}

Status AlertStore::DeleteGroup(const std::string& key) {
  auto stmt = db_->Prepare("DELETE FROM alert_groups WHERE key = ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->BindText(1, key);
  return stmt->Run();
}

Result<std::vector<GroupRecord>> AlertStore::Groups() const {
  auto stmt = db_->Prepare("SELECT key, last_sent_ms, sent_firing FROM alert_groups");
  if (!stmt.ok()) return stmt.status();
  std::vector<GroupRecord> out;
  Status st;
  while (stmt->Step(&st)) {
    GroupRecord g;
    g.key = std::string(stmt->ColumnText(0));
    g.last_sent_ms = stmt->ColumnInt64(1);
    auto ids = nlohmann::json::parse(stmt->ColumnText(2), nullptr, false);
    if (ids.is_array()) {
      for (const auto& id : ids) {
        if (id.is_string()) g.sent_firing.insert(id.get<std::string>());
      }
    }
    out.push_back(std::move(g));
  }
  if (!st.ok()) return st;
  return out;
}

Status AlertStore::SaveSilence(const Silence& silence) {
  auto stmt = db_->Prepare(
      "INSERT INTO silences (id, ends_at_ms, updated_ms, body) VALUES (?1, ?2, ?3, ?4) "
      "ON CONFLICT (id) DO UPDATE SET ends_at_ms = ?2, updated_ms = ?3, body = ?4");
  if (!stmt.ok()) return stmt.status();
  std::string body = SilenceRecordJson(silence);
  stmt->BindText(1, silence.id);
  stmt->BindInt64(2, silence.ends_at_ms);
  stmt->BindInt64(3, silence.updated_at_ms);
  stmt->BindText(4, body);
  return stmt->Run();
}

Result<std::vector<Silence>> AlertStore::Silences() const {
  auto stmt = db_->Prepare("SELECT body FROM silences");
  if (!stmt.ok()) return stmt.status();
  std::vector<Silence> out;
  Status st;
  while (stmt->Step(&st)) {
    auto s = ParseSilenceRecord(stmt->ColumnText(0));
    if (s.ok()) out.push_back(std::move(s).value());
  }
  if (!st.ok()) return st;
  return out;
}

Status AlertStore::PruneSilences(int64_t now_ms) {
  auto stmt = db_->Prepare("DELETE FROM silences WHERE ends_at_ms < ?1");
  if (!stmt.ok()) return stmt.status();
  stmt->BindInt64(1, now_ms - options_.silence_retention_ms);
  return stmt->Run();
}

}  // namespace vigil::alert

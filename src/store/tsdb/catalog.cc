#include "store/tsdb/catalog.h"

#include "store/tsdb/wal.h"

namespace vigil::tsdb {
namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS series("
    " id INTEGER PRIMARY KEY,"
    " metric TEXT NOT NULL,"
    " labels BLOB NOT NULL,"        // PutLabels encoding, the source of truth
    " labels_text TEXT NOT NULL);"  // {a="1"} rendering, for people with sqlite3
    "CREATE TABLE IF NOT EXISTS metrics("
    " name TEXT PRIMARY KEY,"
    " type INTEGER NOT NULL,"
    " help TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT OR IGNORE INTO meta VALUES('format', 'vigil-tsdb-catalog-1');";

}  // namespace

Result<std::unique_ptr<Catalog>> Catalog::Open(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(path));
  VIGIL_RETURN_IF_ERROR(db->Exec(kSchema));
  return std::unique_ptr<Catalog>(new Catalog(std::move(db)));
}

Status Catalog::LoadSeries(const std::function<Status(uint64_t, wire::Labels)>& fn) {
  std::lock_guard lock(mu_);
  VIGIL_ASSIGN_OR_RETURN(SqliteStmt stmt,
                         db_->Prepare("SELECT id, labels FROM series ORDER BY id"));
  Status st;
  while (stmt.Step(&st)) {
    std::string_view blob = stmt.ColumnBlob(1);
    wire::Labels labels;
    if (!wire::GetLabels(&blob, &labels, wire::kMaxLabelsPerSeries) || !blob.empty()) {
      return Corruption("catalog series " + std::to_string(stmt.ColumnInt64(0)) +
                        " has malformed labels in " + db_->path());
    }
    VIGIL_RETURN_IF_ERROR(fn(static_cast<uint64_t>(stmt.ColumnInt64(0)), std::move(labels)));
  }
  return st;
}

Status Catalog::LoadFamilies(std::vector<wire::MetricFamily>* out) {
  std::lock_guard lock(mu_);
  VIGIL_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare("SELECT name, type, help FROM metrics"));
  Status st;
  while (stmt.Step(&st)) {
    int64_t type = stmt.ColumnInt64(1);
    if (type < 0 || type > static_cast<int64_t>(wire::MetricType::kCounter)) type = 0;
    out->push_back({std::string(stmt.ColumnText(0)), static_cast<wire::MetricType>(type),
                    std::string(stmt.ColumnText(2))});
  }
  return st;
}

Status Catalog::Write(const std::vector<std::pair<uint64_t, wire::Labels>>& series,
                      const std::vector<wire::MetricFamily>& families) {
  if (series.empty() && families.empty()) return Status::Ok();
  std::lock_guard lock(mu_);
  VIGIL_ASSIGN_OR_RETURN(SqliteStmt add_series,
                         db_->Prepare("INSERT OR IGNORE INTO series(id, metric, labels, "
                                      "labels_text) VALUES(?1, ?2, ?3, ?4)"));
  VIGIL_ASSIGN_OR_RETURN(
      SqliteStmt add_family,
      db_->Prepare("INSERT OR REPLACE INTO metrics(name, type, help) VALUES(?1, ?2, ?3)"));
  SqliteTxn txn(db_.get());
  VIGIL_RETURN_IF_ERROR(txn.Begin());
  for (const auto& [id, labels] : series) {
    std::string blob, text = wire::LabelsToString(labels);
    wire::PutLabels(&blob, labels);
    add_series.BindInt64(1, static_cast<int64_t>(id));
    add_series.BindText(2, wire::MetricName(labels));
    add_series.BindBlob(3, blob);
    add_series.BindText(4, text);
    VIGIL_RETURN_IF_ERROR(add_series.Run());
  }
  for (const auto& f : families) {
    add_family.BindText(1, f.name);
    add_family.BindInt64(2, static_cast<int64_t>(f.type));
    add_family.BindText(3, f.help);
    VIGIL_RETURN_IF_ERROR(add_family.Run());
  }
  return txn.Commit();
}

void Catalog::Close() {
  std::lock_guard lock(mu_);
  db_.reset();
}

}  // namespace vigil::tsdb

#include "store/common/sqlite.h"

#include <sqlite3.h>

namespace vigil::store {
namespace {

Status SqliteError(sqlite3* db, std::string_view what, int rc) {
  std::string msg(what);
  msg += ": ";
  msg += db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) return Corruption(msg);
  if (primary == SQLITE_FULL) return ResourceExhausted(msg + " (disk full?)");
  if (primary == SQLITE_BUSY || primary == SQLITE_LOCKED) return Unavailable(msg);
  return IoError(msg);
}

}  // namespace

SqliteStmt& SqliteStmt::operator=(SqliteStmt&& o) noexcept {
  if (this != &o) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    stmt_ = o.stmt_;
    db_ = o.db_;
    o.stmt_ = nullptr;
  }
  return *this;
}

SqliteStmt::~SqliteStmt() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

void SqliteStmt::BindInt64(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }

void SqliteStmt::BindBlob(int i, std::string_view v) {
  // A null pointer would bind NULL; an empty value must stay an empty blob.
  sqlite3_bind_blob64(stmt_, i, v.empty() ? "" : v.data(), v.size(), SQLITE_STATIC);
}

void SqliteStmt::BindText(int i, std::string_view v) {
  sqlite3_bind_text64(stmt_, i, v.empty() ? "" : v.data(), v.size(), SQLITE_STATIC, SQLITE_UTF8);
}

bool SqliteStmt::Step(Status* status) {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE) *status = SqliteError(db_, "sqlite step", rc);
  return false;
}

Status SqliteStmt::Run() {
  Status st;
  while (Step(&st)) {
  }
  Reset();
  return st;
}

void SqliteStmt::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t SqliteStmt::ColumnInt64(int i) const { return sqlite3_column_int64(stmt_, i); }

std::string_view SqliteStmt::ColumnBlob(int i) const {
  const void* p = sqlite3_column_blob(stmt_, i);
  int n = sqlite3_column_bytes(stmt_, i);
  if (p == nullptr || n <= 0) return {};
  return {static_cast<const char*>(p), static_cast<size_t>(n)};
}

std::string_view SqliteStmt::ColumnText(int i) const {
  const unsigned char* p = sqlite3_column_text(stmt_, i);
  int n = sqlite3_column_bytes(stmt_, i);
  if (p == nullptr || n <= 0) return {};
  return {reinterpret_cast<const char*>(p), static_cast<size_t>(n)};
}

bool SqliteStmt::ColumnIsNull(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }

Result<std::unique_ptr<SqliteDb>> SqliteDb::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status st = SqliteError(raw, "open " + path, rc);
    sqlite3_close(raw);
    return st;
  }
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, path));
  sqlite3_busy_timeout(raw, 5000);
  VIGIL_RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode=WAL").WithContext(path));
  VIGIL_RETURN_IF_ERROR(db->Exec("PRAGMA synchronous=FULL").WithContext(path));
  return db;
}

SqliteDb::~SqliteDb() { sqlite3_close_v2(db_); }

int64_t SqliteDb::Changes() const { return sqlite3_changes64(db_); }

Status SqliteDb::Exec(const std::string& sql) {
  char* err = nullptr;
  int rc = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string msg = "sqlite exec on " + path_ + ": " + (err != nullptr ? err : sqlite3_errstr(rc));
  sqlite3_free(err);
  int primary = rc & 0xff;
  if (primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB) return Corruption(msg);
  if (primary == SQLITE_FULL) return ResourceExhausted(msg);
  return IoError(msg);
}

Result<SqliteStmt> SqliteDb::Prepare(const std::string& sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, "prepare on " + path_, rc);
  return SqliteStmt(stmt, db_);
}

SqliteTxn::~SqliteTxn() {
  if (!done_) (void)db_->Exec("ROLLBACK");
}

Status SqliteTxn::Commit() {
  Status st = db_->Exec("COMMIT");
  done_ = st.ok();
  return st;
}

}  // namespace vigil::store

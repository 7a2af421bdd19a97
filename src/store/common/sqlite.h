// Thin RAII wrappers over the SQLite C API that turn its result codes into
// Status, so the partition and catalog code reads as a list of statements.
//
// Thread safety: none. A SqliteDb (and the statements prepared on it) is used
// by one thread at a time; its owner holds the lock that says so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace vigil::store {

class SqliteStmt {
 public:
  SqliteStmt() = default;
  SqliteStmt(sqlite3_stmt* stmt, sqlite3* db) : stmt_(stmt), db_(db) {}
  SqliteStmt(SqliteStmt&& o) noexcept : stmt_(o.stmt_), db_(o.db_) { o.stmt_ = nullptr; }
  SqliteStmt& operator=(SqliteStmt&& o) noexcept;
  SqliteStmt(const SqliteStmt&) = delete;
  SqliteStmt& operator=(const SqliteStmt&) = delete;
  ~SqliteStmt();

  // Parameters are 1-based, as in SQLite.
  void BindInt64(int i, int64_t v);
  // The bytes are not copied: they must stay alive until the statement is
  // run or reset. A temporary std::string would dangle, so binding one does
  // not compile; name it first.
  void BindBlob(int i, std::string_view v);
  void BindText(int i, std::string_view v);
  void BindText(int i, const char* v) { BindText(i, std::string_view(v)); }
  void BindBlob(int i, std::string&& v) = delete;
  void BindText(int i, std::string&& v) = delete;
  // True while a row is available; false when done. Errors go to `status`.
  bool Step(Status* status);
  // Runs a statement that returns no rows.
  Status Run();
  void Reset();

  int64_t ColumnInt64(int i) const;
  // Valid until the next Step or Reset.
  std::string_view ColumnBlob(int i) const;
  std::string_view ColumnText(int i) const;
  bool ColumnIsNull(int i) const;

 private:
  sqlite3_stmt* stmt_ = nullptr;
  sqlite3* db_ = nullptr;
};

class SqliteDb {
 public:
  // Opens (creating if needed) a database in WAL journal mode with full sync:
  // a committed transaction survives power loss, which the WAL truncation in
  // the stores' maintenance relies on.
  static Result<std::unique_ptr<SqliteDb>> Open(const std::string& path);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  Status Exec(const std::string& sql);
  // Rows the last INSERT, UPDATE or DELETE on this connection changed.
  int64_t Changes() const;
  Result<SqliteStmt> Prepare(const std::string& sql);
  const std::string& path() const { return path_; }

 private:
  SqliteDb(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

// A transaction that rolls back unless Commit() succeeded.
class SqliteTxn {
 public:
  explicit SqliteTxn(SqliteDb* db) : db_(db) {}
  ~SqliteTxn();
  Status Begin() { return db_->Exec("BEGIN IMMEDIATE"); }
  Status Commit();

 private:
  SqliteDb* db_;
  bool done_ = false;
};

}  // namespace vigil::store

// One day of log blocks: dir/YYYY-MM-DD.db (SQLite, WAL mode, full sync), one
// row per block, keyed by (stream_id, first_line), holding its summary, token
// filter and compressed lines (schema in docs/logstore.md). A block lives in
// the partition of the day of its newest line, so retention can delete whole
// files.
//
// Thread safety: all methods may be called concurrently; an internal mutex
// serialises use of the SQLite connection.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/common/sqlite.h"
#include "store/logs/format.h"

namespace vigil::logstore {

using store::SqliteDb;
using store::SqliteStmt;
using store::SqliteTxn;

struct NewBlock {
  BlockHeader header;
  std::string filter;
  std::string data;
};

struct StoredBlockInfo {
  BlockHeader header;
  int64_t rowid = 0;
  uint64_t disk_bytes = 0;  // filter + data
};

class Partition {
 public:
  static Result<std::unique_ptr<Partition>> Open(const std::string& path, int64_t day);

  int64_t day() const { return day_; }
  const std::string& path() const { return path_; }

  // Stores the blocks in one transaction; returns their row ids, in order.
  Result<std::vector<int64_t>> Write(const std::vector<const NewBlock*>& blocks);
  Result<std::vector<StoredBlockInfo>> Load();
  Result<std::string> ReadFilter(int64_t rowid);
  Result<std::string> ReadData(int64_t rowid);

 private:
  Partition(std::unique_ptr<SqliteDb> db, std::string path, int64_t day)
      : db_(std::move(db)), path_(std::move(path)), day_(day) {}
  Result<std::string> ReadColumn(const char* sql, int64_t rowid);

  std::mutex mu_;  // guards db_
  std::unique_ptr<SqliteDb> db_;
  const std::string path_;
  const int64_t day_;
};

}  // namespace vigil::logstore

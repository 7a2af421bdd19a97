#include "store/logs/partition.h"

#include "core/coding.h"

namespace vigil::logstore {
namespace {

std::string EncodeLevels(const BlockHeader& h) {
  std::string out;
  for (uint32_t c : h.level_counts) PutVarint64(&out, c);
  return out;
}

bool DecodeLevels(std::string_view in, BlockHeader* h) {
  for (auto& c : h->level_counts) {
    uint64_t v;
    if (!GetVarint64(&in, &v) || v > UINT32_MAX) return false;
    c = static_cast<uint32_t>(v);
  }
  return in.empty();
}

}  // namespace

Result<std::unique_ptr<Partition>> Partition::Open(const std::string& path, int64_t day) {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(path));
  // SQLite's default page cache is 2 MiB per connection, and every day file
  // has one: writes of compressed blocks fill it and it is never given back.
  // Blocks are read once per query from the OS page cache anyway; larger
  // transactions spill to the WAL file before they commit.
  VIGIL_RETURN_IF_ERROR(db->Exec("PRAGMA cache_size=-256").WithContext(path));
  VIGIL_RETURN_IF_ERROR(db->Exec(
      "CREATE TABLE IF NOT EXISTS blocks(id INTEGER PRIMARY KEY, stream_id INTEGER NOT NULL,"
      " first_line INTEGER NOT NULL, last_line INTEGER NOT NULL, min_time INTEGER NOT NULL,"
      " max_time INTEGER NOT NULL, min_seq INTEGER NOT NULL, max_seq INTEGER NOT NULL,"
      " levels BLOB NOT NULL, raw_bytes INTEGER NOT NULL, filter BLOB NOT NULL,"
      " data BLOB NOT NULL);"
      "CREATE UNIQUE INDEX IF NOT EXISTS blocks_key ON blocks(stream_id, first_line);"));
  return std::unique_ptr<Partition>(new Partition(std::move(db), path, day));
}

Result<std::vector<int64_t>> Partition::Write(const std::vector<const NewBlock*>& blocks) {
  std::lock_guard lock(mu_);
  SqliteTxn txn(db_.get());
  VIGIL_RETURN_IF_ERROR(txn.Begin());
  VIGIL_ASSIGN_OR_RETURN(
      SqliteStmt s,
      db_->Prepare("INSERT INTO blocks(stream_id, first_line, last_line, min_time, max_time,"
                   " min_seq, max_seq, levels, raw_bytes, filter, data)"
                   " VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id"));
  std::vector<int64_t> ids;
  for (const NewBlock* b : blocks) {
    const BlockHeader& h = b->header;
    std::string levels = EncodeLevels(h);
    s.BindInt64(1, static_cast<int64_t>(h.stream_id));
    s.BindInt64(2, static_cast<int64_t>(h.first_line_no));
    s.BindInt64(3, static_cast<int64_t>(h.last_line_no));
    s.BindInt64(4, h.min_time);
    s.BindInt64(5, h.max_time);
    s.BindInt64(6, static_cast<int64_t>(h.min_seq));
    s.BindInt64(7, static_cast<int64_t>(h.max_seq));
    s.BindBlob(8, levels);
    s.BindInt64(9, static_cast<int64_t>(h.raw_bytes));
    s.BindBlob(10, b->filter);
    s.BindBlob(11, b->data);
    Status st;
    if (!s.Step(&st)) return st.ok() ? Internal("log partition: insert returned no id") : st;
    ids.push_back(s.ColumnInt64(0));
    VIGIL_RETURN_IF_ERROR(s.Run());  // finishes the statement and resets it
  }
  VIGIL_RETURN_IF_ERROR(txn.Commit().WithContext(path_));
  return ids;
}

Result<std::vector<StoredBlockInfo>> Partition::Load() {
  std::lock_guard lock(mu_);
  VIGIL_ASSIGN_OR_RETURN(
      SqliteStmt s,
      db_->Prepare("SELECT id, stream_id, first_line, last_line, min_time, max_time, min_seq,"
                   " max_seq, levels, raw_bytes, length(filter) + length(data) FROM blocks"));
  std::vector<StoredBlockInfo> out;
  Status st;
  while (s.Step(&st)) {
    StoredBlockInfo b;
    b.rowid = s.ColumnInt64(0);
    BlockHeader& h = b.header;
    h.stream_id = static_cast<uint64_t>(s.ColumnInt64(1));
    h.first_line_no = static_cast<uint64_t>(s.ColumnInt64(2));
    h.last_line_no = static_cast<uint64_t>(s.ColumnInt64(3));
    h.min_time = s.ColumnInt64(4);
    h.max_time = s.ColumnInt64(5);
    h.min_seq = static_cast<uint64_t>(s.ColumnInt64(6));
    h.max_seq = static_cast<uint64_t>(s.ColumnInt64(7));
    if (!DecodeLevels(s.ColumnBlob(8), &h) || h.last_line_no < h.first_line_no) {
      return Corruption("log partition " + path_ + ": bad block row");
    }
    h.raw_bytes = static_cast<uint64_t>(s.ColumnInt64(9));
    b.disk_bytes = static_cast<uint64_t>(s.ColumnInt64(10));
    out.push_back(b);
  }
  VIGIL_RETURN_IF_ERROR(st.WithContext(path_));
  return out;
}

Result<std::string> Partition::ReadColumn(const char* sql, int64_t rowid) {
  std::lock_guard lock(mu_);
  VIGIL_ASSIGN_OR_RETURN(SqliteStmt s, db_->Prepare(sql));
  s.BindInt64(1, rowid);
  Status st;
  if (!s.Step(&st)) {
    return st.ok() ? NotFound("log block " + std::to_string(rowid) + " not in " + path_) : st;
  }
  return std::string(s.ColumnBlob(0));
}

Result<std::string> Partition::ReadFilter(int64_t rowid) {
  return ReadColumn("SELECT filter FROM blocks WHERE id = ?", rowid);
}

Result<std::string> Partition::ReadData(int64_t rowid) {
  return ReadColumn("SELECT data FROM blocks WHERE id = ?", rowid);
}

}  // namespace vigil::logstore

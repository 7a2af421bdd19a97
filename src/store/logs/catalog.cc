#include "store/logs/catalog.h"

#include "store/logs/format.h"

namespace vigil::logstore {
namespace {

// A catalog written before a counter existed has no column for it: added
// with default 0 (what those stores knew of it), so every catalog opens.
Status AddSourceColumns(SqliteDb* db) {
  bool has_lost_bytes = false;
  {
    VIGIL_ASSIGN_OR_RETURN(SqliteStmt s, db->Prepare("PRAGMA table_info(sources)"));
    Status st;
    while (s.Step(&st)) has_lost_bytes = has_lost_bytes || s.ColumnText(1) == "lost_bytes";
    VIGIL_RETURN_IF_ERROR(st);
  }
  if (has_lost_bytes) return Status::Ok();
  return db->Exec("ALTER TABLE sources ADD COLUMN lost_bytes INTEGER NOT NULL DEFAULT 0");
}

}  // namespace

Result<std::unique_ptr<Catalog>> Catalog::Open(const std::string& path) {
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(path));
  VIGIL_RETURN_IF_ERROR(
      db->Exec("CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);"
               "CREATE TABLE IF NOT EXISTS streams(id INTEGER PRIMARY KEY, labels BLOB NOT NULL,"
               " next_line INTEGER NOT NULL, head_floor INTEGER NOT NULL DEFAULT 0,"
               " min_time INTEGER NOT NULL, max_time INTEGER NOT NULL);"
               "CREATE TABLE IF NOT EXISTS sources(node TEXT NOT NULL, source_id TEXT NOT NULL,"
               " stream_id INTEGER NOT NULL, end_offset INTEGER NOT NULL, lines INTEGER NOT NULL,"
               " bytes INTEGER NOT NULL, sampled INTEGER NOT NULL, filtered INTEGER NOT NULL,"
               " truncated INTEGER NOT NULL, lost_bytes INTEGER NOT NULL DEFAULT 0,"
               " PRIMARY KEY(node, source_id));"));
  VIGIL_RETURN_IF_ERROR(AddSourceColumns(db.get()));
  return std::unique_ptr<Catalog>(new Catalog(std::move(db)));
}

Result<CatalogContents> Catalog::Load() {
  CatalogContents c;
  Status st;
  {
    VIGIL_ASSIGN_OR_RETURN(SqliteStmt s, db_->Prepare("SELECT key, value FROM meta"));
    while (s.Step(&st)) {
      std::string_view k = s.ColumnText(0);
      auto v = static_cast<uint64_t>(s.ColumnInt64(1));
      if (k == "wal_segment") c.meta.wal_segment = v;
      if (k == "last_seq") c.meta.last_seq = v;
      if (k == "next_stream_id") c.meta.next_stream_id = v;
      if (k == "lines") c.meta.lines = v;
      if (k == "duplicates") c.meta.duplicates = v;
    }
    VIGIL_RETURN_IF_ERROR(st);
  }
  {
    VIGIL_ASSIGN_OR_RETURN(
        SqliteStmt s,
        db_->Prepare("SELECT id, labels, next_line, head_floor, min_time, max_time FROM streams"));
    while (s.Step(&st)) {
      CatalogStream cs;
      cs.id = static_cast<uint64_t>(s.ColumnInt64(0));
      std::string_view blob = s.ColumnBlob(1);
      if (!wire::GetLabels(&blob, &cs.labels, kMaxStreamLabels))
        return Corruption("log catalog: bad stream labels");
      cs.next_line = static_cast<uint64_t>(s.ColumnInt64(2));
      cs.head_floor = static_cast<uint64_t>(s.ColumnInt64(3));
      cs.min_time = s.ColumnInt64(4);
      cs.max_time = s.ColumnInt64(5);
      c.streams.push_back(std::move(cs));
    }
    VIGIL_RETURN_IF_ERROR(st);
  }
  {
    VIGIL_ASSIGN_OR_RETURN(SqliteStmt s, db_->Prepare("SELECT node, source_id, stream_id, "
                                                      "end_offset, lines, bytes, sampled, "
                                                      "filtered, truncated, lost_bytes "
                                                      "FROM sources"));
    while (s.Step(&st)) {
      CatalogSource cs;
      cs.node = std::string(s.ColumnText(0));
      cs.source_id = std::string(s.ColumnText(1));
      cs.stream_id = static_cast<uint64_t>(s.ColumnInt64(2));
      cs.end_offset = static_cast<uint64_t>(s.ColumnInt64(3));
      cs.lines = static_cast<uint64_t>(s.ColumnInt64(4));
      cs.bytes = static_cast<uint64_t>(s.ColumnInt64(5));
      cs.counters.sampled_lines = static_cast<uint64_t>(s.ColumnInt64(6));
      cs.counters.filtered_lines = static_cast<uint64_t>(s.ColumnInt64(7));
      cs.counters.truncated_lines = static_cast<uint64_t>(s.ColumnInt64(8));
      cs.counters.lost_bytes = static_cast<uint64_t>(s.ColumnInt64(9));
      c.sources.push_back(std::move(cs));
    }
    VIGIL_RETURN_IF_ERROR(st);
  }
  return c;
}

Status Catalog::Write(const CatalogMeta* meta, const std::vector<CatalogStream>& streams,
                      const std::vector<CatalogSource>& sources,
                      const std::vector<std::pair<uint64_t, uint64_t>>& floors) {
  SqliteTxn txn(db_.get());
  VIGIL_RETURN_IF_ERROR(txn.Begin());
  if (meta != nullptr) {
    VIGIL_ASSIGN_OR_RETURN(SqliteStmt s,
                           db_->Prepare("INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)"));
    const std::pair<const char*, uint64_t> kv[] = {{"wal_segment", meta->wal_segment},
                                                   {"last_seq", meta->last_seq},
                                                   {"next_stream_id", meta->next_stream_id},
                                                   {"lines", meta->lines},
                                                   {"duplicates", meta->duplicates}};
    for (const auto& [k, v] : kv) {
      s.BindText(1, k);
      s.BindInt64(2, static_cast<int64_t>(v));
      VIGIL_RETURN_IF_ERROR(s.Run());
    }
  }
  if (!streams.empty()) {
    VIGIL_ASSIGN_OR_RETURN(
        SqliteStmt s, db_->Prepare("INSERT INTO streams(id, labels, next_line, min_time, max_time) "
                                   "VALUES(?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
                                   "next_line = excluded.next_line, min_time = excluded.min_time, "
                                   "max_time = excluded.max_time"));
    std::string blob;
    for (const auto& cs : streams) {
      blob.clear();
      wire::PutLabels(&blob, cs.labels);
      s.BindInt64(1, static_cast<int64_t>(cs.id));
      s.BindBlob(2, blob);
      s.BindInt64(3, static_cast<int64_t>(cs.next_line));
      s.BindInt64(4, cs.min_time);
      s.BindInt64(5, cs.max_time);
      VIGIL_RETURN_IF_ERROR(s.Run());
    }
  }
  if (!sources.empty()) {
    VIGIL_ASSIGN_OR_RETURN(SqliteStmt s,
                           db_->Prepare("INSERT OR REPLACE INTO sources(node, source_id, "
                                        "stream_id, end_offset, lines, bytes, sampled, "
                                        "filtered, truncated, lost_bytes) "
                                        "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
    for (const auto& cs : sources) {
      s.BindText(1, cs.node);
      s.BindText(2, cs.source_id);
      s.BindInt64(3, static_cast<int64_t>(cs.stream_id));
      s.BindInt64(4, static_cast<int64_t>(cs.end_offset));
      s.BindInt64(5, static_cast<int64_t>(cs.lines));
      s.BindInt64(6, static_cast<int64_t>(cs.bytes));
      s.BindInt64(7, static_cast<int64_t>(cs.counters.sampled_lines));
      s.BindInt64(8, static_cast<int64_t>(cs.counters.filtered_lines));
      s.BindInt64(9, static_cast<int64_t>(cs.counters.truncated_lines));
      s.BindInt64(10, static_cast<int64_t>(cs.counters.lost_bytes));
      VIGIL_RETURN_IF_ERROR(s.Run());
    }
  }
  if (!floors.empty()) {
    VIGIL_ASSIGN_OR_RETURN(SqliteStmt s,
                           db_->Prepare("UPDATE streams SET head_floor = ? WHERE id = ?"));
    for (const auto& [id, floor] : floors) {
      s.BindInt64(1, static_cast<int64_t>(floor));
      s.BindInt64(2, static_cast<int64_t>(id));
      VIGIL_RETURN_IF_ERROR(s.Run());
    }
  }
  return txn.Commit();
}

}  // namespace vigil::logstore

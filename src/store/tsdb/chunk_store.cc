#include "store/tsdb/chunk_store.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "core/civil_time.h"
#include "core/strings.h"
#include "store/tsdb/head.h"

namespace vigil::tsdb {
namespace {

constexpr std::string_view kSuffix = ".db";

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS chunks("
    " series_id INTEGER NOT NULL,"
    " min_t INTEGER NOT NULL,"
    " max_t INTEGER NOT NULL,"
    " count INTEGER NOT NULL,"
    " data BLOB NOT NULL);"
    "CREATE UNIQUE INDEX IF NOT EXISTS chunks_by_series ON chunks(series_id, min_t);"
    "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT OR IGNORE INTO meta VALUES('format', 'vigil-tsdb-chunks-1');";

}  // namespace

struct ChunkStore::Partition {
  std::string path;
  std::unique_ptr<SqliteDb> db;  // null until first use
  SqliteStmt read;
  SqliteStmt insert;
};

std::string DayName(int64_t day) {
  CivilDate c = CivilFromDays(day);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04lld-%02u-%02u", static_cast<long long>(c.year), c.month,
                c.day);
  return buf;
}

bool ParseDayName(std::string_view name, int64_t* day) {
  if (name.size() != 10 || name[4] != '-' || name[7] != '-') return false;
  auto y = ParseUint64(name.substr(0, 4));
  auto m = ParseUint64(name.substr(5, 2));
  auto d = ParseUint64(name.substr(8, 2));
  if (!y || !m || !d || *m < 1 || *m > 12 || *d < 1 || *d > 31) return false;
  *day =
      DaysFromCivil(static_cast<int64_t>(*y), static_cast<unsigned>(*m), static_cast<unsigned>(*d));
  return DayName(*day) == name;
}

ChunkStore::ChunkStore(Env* env, std::string dir) : env_(env), dir_(std::move(dir)) {}
ChunkStore::~ChunkStore() = default;

Result<std::unique_ptr<ChunkStore>> ChunkStore::Open(Env* env, std::string dir) {
  VIGIL_RETURN_IF_ERROR(env->CreateDirs(dir));
  std::unique_ptr<ChunkStore> store(new ChunkStore(env, dir));
  VIGIL_ASSIGN_OR_RETURN(std::vector<std::string> names, env->ListDir(dir));
  for (const auto& n : names) {
    if (!EndsWith(n, kSuffix)) continue;
    int64_t day;
    if (!ParseDayName(std::string_view(n).substr(0, n.size() - kSuffix.size()), &day)) continue;
    auto p = std::make_unique<Partition>();
    p->path = JoinPath(dir, n);
    store->partitions_.emplace(day, std::move(p));
  }
  return store;
}

Result<ChunkStore::Partition*> ChunkStore::GetPartition(int64_t day, bool create) {
  if (closed_) return FailedPrecondition("the metric store is closed");
  auto it = partitions_.find(day);
  if (it == partitions_.end()) {
    if (!create) return NotFound("no partition for " + DayName(day));
    auto p = std::make_unique<Partition>();
    p->path = JoinPath(dir_, DayName(day) + std::string(kSuffix));
    it = partitions_.emplace(day, std::move(p)).first;
  }
  Partition* p = it->second.get();
  if (p->db) return p;
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<SqliteDb> db, SqliteDb::Open(p->path));
  VIGIL_RETURN_IF_ERROR(db->Exec(kSchema));
  VIGIL_ASSIGN_OR_RETURN(
      p->read, db->Prepare("SELECT min_t, max_t, count, data FROM chunks WHERE series_id = ?1 "
                           "AND min_t <= ?3 AND max_t >= ?2 ORDER BY min_t"));
  VIGIL_ASSIGN_OR_RETURN(p->insert,
                         db->Prepare("INSERT OR REPLACE INTO chunks(series_id, min_t, max_t, "
                                     "count, data) VALUES(?1, ?2, ?3, ?4, ?5)"));
  p->db = std::move(db);
  return p;
}

Status ChunkStore::WriteDay(int64_t day, const std::vector<StoredChunk>& chunks) {
  std::lock_guard lock(mu_);
  VIGIL_ASSIGN_OR_RETURN(Partition * p, GetPartition(day, true));
  SqliteTxn txn(p->db.get());
  VIGIL_RETURN_IF_ERROR(txn.Begin());
  for (const auto& c : chunks) {
    p->insert.BindInt64(1, static_cast<int64_t>(c.series_id));
    p->insert.BindInt64(2, c.min_t);
    p->insert.BindInt64(3, c.max_t);
    p->insert.BindInt64(4, c.count);
    p->insert.BindBlob(5, c.data);
    VIGIL_RETURN_IF_ERROR(p->insert.Run());
  }
  return txn.Commit();
}

Status ChunkStore::ReadPartition(Partition* p, const std::vector<uint64_t>& ids, int64_t mint,
                                 int64_t maxt, std::vector<StoredChunk>* out) {
  Status st;
  for (uint64_t id : ids) {
    p->read.BindInt64(1, static_cast<int64_t>(id));
    p->read.BindInt64(2, mint);
    p->read.BindInt64(3, maxt);
    while (p->read.Step(&st)) {
      out->push_back({id, p->read.ColumnInt64(0), p->read.ColumnInt64(1), p->read.ColumnInt64(2),
                      std::string(p->read.ColumnBlob(3))});
    }
    p->read.Reset();
    VIGIL_RETURN_IF_ERROR(st.WithContext(p->path));
  }
  return Status::Ok();
}

Status ChunkStore::Read(const std::vector<uint64_t>& ids, int64_t mint, int64_t maxt,
                        std::vector<StoredChunk>* out) {
  if (ids.empty() || mint > maxt) return Status::Ok();
  std::lock_guard lock(mu_);
  for (auto it = partitions_.lower_bound(DayOf(mint));
       it != partitions_.end() && it->first <= DayOf(maxt); ++it) {
    VIGIL_ASSIGN_OR_RETURN(Partition * p, GetPartition(it->first, false));
    VIGIL_RETURN_IF_ERROR(ReadPartition(p, ids, mint, maxt, out));
  }
  return Status::Ok();
}

Status ChunkStore::SeriesWithChunks(const std::vector<uint64_t>& ids, int64_t mint, int64_t maxt,
                                    std::vector<uint64_t>* out) {
  if (ids.empty() || mint > maxt) return Status::Ok();
  std::vector<uint64_t> left = ids;  // not found yet
  std::lock_guard lock(mu_);
  for (auto it = partitions_.lower_bound(DayOf(mint));
       it != partitions_.end() && it->first <= DayOf(maxt) && !left.empty(); ++it) {
    VIGIL_ASSIGN_OR_RETURN(Partition * p, GetPartition(it->first, false));
    // The (series_id, min_t) index answers this; the blob column is never read.
    VIGIL_ASSIGN_OR_RETURN(SqliteStmt stmt,
                           p->db->Prepare("SELECT 1 FROM chunks WHERE series_id = ?1 AND "
                                          "min_t <= ?3 AND max_t >= ?2 LIMIT 1"));
    std::vector<uint64_t> still;
    for (uint64_t id : left) {
      stmt.BindInt64(1, static_cast<int64_t>(id));
      stmt.BindInt64(2, mint);
      stmt.BindInt64(3, maxt);
      Status st;
      bool found = stmt.Step(&st);
      stmt.Reset();
      VIGIL_RETURN_IF_ERROR(st.WithContext(p->path));
      (found ? out : &still)->push_back(id);
    }
    left = std::move(still);
  }
  std::sort(out->begin(), out->end());
  out->erase(std::unique(out->begin(), out->end()), out->end());
  return Status::Ok();
}

Status ChunkStore::NewestChunks(std::unordered_map<uint64_t, StoredChunk>* out) {
  std::lock_guard lock(mu_);
  std::vector<int64_t> days;
  for (const auto& [day, p] : partitions_) days.push_back(day);
  // Newest day first: a series seen there needs no older partition.
  for (auto d = days.rbegin(); d != days.rend(); ++d) {
    VIGIL_ASSIGN_OR_RETURN(Partition * p, GetPartition(*d, false));
    // SQLite returns the bare columns of the row holding MAX(max_t).
    VIGIL_ASSIGN_OR_RETURN(SqliteStmt stmt,
                           p->db->Prepare("SELECT series_id, MAX(max_t), min_t, count, data "
                                          "FROM chunks GROUP BY series_id"));
    Status st;
    while (stmt.Step(&st)) {
      auto id = static_cast<uint64_t>(stmt.ColumnInt64(0));
      if (out->count(id) != 0) continue;
      out->emplace(id, StoredChunk{id, stmt.ColumnInt64(2), stmt.ColumnInt64(1),
                                   stmt.ColumnInt64(3), std::string(stmt.ColumnBlob(4))});
    }
    VIGIL_RETURN_IF_ERROR(st.WithContext(p->path));
  }
  return Status::Ok();
}

Result<int> ChunkStore::DropDaysEndingBy(int64_t cutoff_ms) {
  std::lock_guard lock(mu_);
  int dropped = 0;
  while (!partitions_.empty() && (partitions_.begin()->first + 1) * kDayMs <= cutoff_ms) {
    std::string path = partitions_.begin()->second->path;
    partitions_.erase(partitions_.begin());  // closes the connection first
    for (const char* suffix : {"-wal", "-shm", ""}) {
      std::string f = path + suffix;
      if (!env_->FileExists(f)) continue;
      VIGIL_RETURN_IF_ERROR(env_->RemoveFile(f).WithContext("retention"));
    }
    ++dropped;
  }
  return dropped;
}

Result<int64_t> ChunkStore::MinTime() {
  std::lock_guard lock(mu_);
  for (const auto& [day, unused] : partitions_) {
    VIGIL_ASSIGN_OR_RETURN(Partition * p, GetPartition(day, false));
    VIGIL_ASSIGN_OR_RETURN(SqliteStmt stmt, p->db->Prepare("SELECT MIN(min_t) FROM chunks"));
    Status st;
    if (stmt.Step(&st) && !stmt.ColumnIsNull(0)) return stmt.ColumnInt64(0);
    VIGIL_RETURN_IF_ERROR(st);
  }
  return std::numeric_limits<int64_t>::min();
}

std::vector<int64_t> ChunkStore::Days() {
  std::lock_guard lock(mu_);
  std::vector<int64_t> out;
  for (const auto& [day, p] : partitions_) out.push_back(day);
  return out;
}

void ChunkStore::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  for (auto& [day, p] : partitions_) {
    p->read = SqliteStmt();
    p->insert = SqliteStmt();
    p->db.reset();
  }
}

}  // namespace vigil::tsdb

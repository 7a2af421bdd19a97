// ChunkStore: closed chunks in one SQLite file per UTC day, chunks/YYYY-MM-DD.db
// (schema in docs/tsdb.md). Whole files are the unit of retention: dropping a
// day is one unlink, never a row delete.
//
// Thread safety: all methods may be called concurrently. mu_ guards the
// partition map and every SQLite connection in it; callers copy chunk bytes
// out under it and decode them after, so the lock covers only SQLite I/O.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "store/common/sqlite.h"

namespace vigil::tsdb {

using store::SqliteDb;
using store::SqliteStmt;
using store::SqliteTxn;

struct StoredChunk {
  uint64_t series_id = 0;
  int64_t min_t = 0;
  int64_t max_t = 0;
  int64_t count = 0;
  std::string data;  // EncodeChunk bytes
};

// "2026-11-30" for a day number (days since 1970-01-01 UTC) and back.
std::string DayName(int64_t day);
bool ParseDayName(std::string_view name, int64_t* day);

class ChunkStore {
 public:
  // `dir` is the chunks/ directory; created if missing.
  static Result<std::unique_ptr<ChunkStore>> Open(Env* env, std::string dir);
  ~ChunkStore();

  // Writes the chunks of one day partition in one transaction. A chunk with
  // the same (series_id, min_t) as a stored one replaces it, so retrying a
  // write after a partial failure never duplicates.
  Status WriteDay(int64_t day, const std::vector<StoredChunk>& chunks);

  // Chunks of the given series overlapping [mint, maxt], from every day
  // partition that overlaps it, ordered by day, then series, then min_t.
  Status Read(const std::vector<uint64_t>& ids, int64_t mint, int64_t maxt,
              std::vector<StoredChunk>* out);

  // Appends to `out` the ids (of `ids`) that have a chunk overlapping
  // [mint, maxt], without reading chunk bytes; sorted, no duplicates.
  Status SeriesWithChunks(const std::vector<uint64_t>& ids, int64_t mint, int64_t maxt,
                          std::vector<uint64_t>* out);

  // The newest chunk of every series (at open: last samples and replay bounds).
  Status NewestChunks(std::unordered_map<uint64_t, StoredChunk>* out);

  // Deletes every day partition that ended at or before cutoff_ms.
  Result<int> DropDaysEndingBy(int64_t cutoff_ms);

  // Oldest min_t over all partitions; kNoTime-like INT64_MIN when empty.
  Result<int64_t> MinTime();
  std::vector<int64_t> Days();
  void Close();

 private:
  struct Partition;
  ChunkStore(Env* env, std::string dir);
  // Opens (creating if `create`) the connection of a day. Needs mu_ held.
  Result<Partition*> GetPartition(int64_t day, bool create);
  Status ReadPartition(Partition* p, const std::vector<uint64_t>& ids, int64_t mint, int64_t maxt,
                       std::vector<StoredChunk>* out);

  Env* env_;
  std::string dir_;
  std::mutex mu_;
  std::map<int64_t, std::unique_ptr<Partition>> partitions_;  // by day; connection opened lazily
  bool closed_ = false;
};

}  // namespace vigil::tsdb

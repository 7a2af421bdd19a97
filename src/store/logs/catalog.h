// The log store's catalog: dir/catalog.db (SQLite, WAL mode, full sync). It
// holds a checkpoint of the store's bookkeeping as of the start of WAL segment
// `wal_segment`: streams, per-(node, source_id) committed offsets and totals,
// counters. Replaying WAL segments >= wal_segment on top of it restores the
// exact state (docs/logstore.md "Recovery").
//
// Thread safety: none; the store calls it from Open and from Maintain, which
// are serialised.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "store/common/sqlite.h"
#include "wire/log_batch.h"

namespace vigil::logstore {

using store::SqliteDb;
using store::SqliteStmt;
using store::SqliteTxn;

struct CatalogMeta {
  uint64_t wal_segment = 0;  // replay from here to rebuild the bookkeeping
  uint64_t last_seq = 0;
  uint64_t next_stream_id = 1;
  uint64_t lines = 0;
  uint64_t duplicates = 0;
};

struct CatalogStream {
  uint64_t id = 0;
  wire::Labels labels;
  uint64_t next_line = 0;
  // Every line below this is in a block or gone; WAL replay never restores
  // such a line (written after the blocks it vouches for).
  uint64_t head_floor = 0;
  int64_t min_time = INT64_MAX;
  int64_t max_time = INT64_MIN;
};

struct CatalogSource {
  std::string node;
  std::string source_id;
  uint64_t stream_id = 0;
  uint64_t end_offset = 0;
  uint64_t lines = 0;
  uint64_t bytes = 0;
  wire::LogSourceCounters counters;
};

struct CatalogContents {
  CatalogMeta meta;
  std::vector<CatalogStream> streams;
  std::vector<CatalogSource> sources;
};

class Catalog {
 public:
  static Result<std::unique_ptr<Catalog>> Open(const std::string& path);
  Result<CatalogContents> Load();
  // One transaction: meta (when given), upserts of the streams and sources,
  // then the head floors (stream id, floor).
  Status Write(const CatalogMeta* meta, const std::vector<CatalogStream>& streams,
               const std::vector<CatalogSource>& sources,
               const std::vector<std::pair<uint64_t, uint64_t>>& floors);

 private:
  explicit Catalog(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  std::unique_ptr<SqliteDb> db_;
};

}  // namespace vigil::logstore

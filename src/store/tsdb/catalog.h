// Catalog: catalog.db, the durable list of series (id, labels) and metric
// metadata (schema in docs/tsdb.md). The WAL records both first; the catalog
// gets them at the next Maintain, before the WAL segments that hold them are
// dropped.
//
// Thread safety: all methods may be called concurrently; mu_ guards the
// connection.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "store/common/sqlite.h"
#include "wire/metric_batch.h"

namespace vigil::tsdb {

using store::SqliteDb;
using store::SqliteStmt;
using store::SqliteTxn;

class Catalog {
 public:
  static Result<std::unique_ptr<Catalog>> Open(const std::string& path);

  Status LoadSeries(const std::function<Status(uint64_t, wire::Labels)>& fn);
  Status LoadFamilies(std::vector<wire::MetricFamily>* out);
  // Adds series (ignoring ids already present) and upserts families, in one
  // transaction.
  Status Write(const std::vector<std::pair<uint64_t, wire::Labels>>& series,
               const std::vector<wire::MetricFamily>& families);
  void Close();

 private:
  explicit Catalog(std::unique_ptr<SqliteDb> db) : db_(std::move(db)) {}
  std::mutex mu_;
  std::unique_ptr<SqliteDb> db_;
};

}  // namespace vigil::tsdb

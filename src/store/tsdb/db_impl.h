// DbImpl: the composition behind Db (db.h). Internal to the tsdb module.
//
// Locks, always taken in this order when nested:
//   maintain_mu_  serializes Maintain and Close (the only code that moves data
//                 from the head to the chunk store and drops WAL segments).
//   mu_           guards index_, head_, wal_, families_, the pending catalog
//                 entries, the counters and closed_. Append holds it for
//                 in-memory work and one buffered WAL write; SQLite I/O never
//                 runs under it. WAL fdatasync does (once per
//                 wal_sync_interval_ms), because AppendableFile is one-thread.
//   bg_mu_        guards stop_ for the background thread.
// catalog_ and store_ lock themselves.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/dir_size_cache.h"
#include "store/tsdb/catalog.h"
#include "store/tsdb/chunk_store.h"
#include "store/tsdb/db.h"
#include "store/tsdb/head.h"
#include "store/tsdb/series_index.h"
#include "store/tsdb/wal.h"

namespace vigil::tsdb {

// A WAL segment is closed and a new one started past this size.
inline constexpr uint64_t kWalSegmentBytes = 64u << 20;
// How often the background thread runs Maintain.
inline constexpr int64_t kMaintainIntervalMs = 5000;

class DbImpl final : public Db {
 public:
  explicit DbImpl(const Options& options);
  ~DbImpl() override;

  Status Init();

  using Db::Append;
  Status Append(const wire::MetricBatch& batch, std::vector<uint64_t>* ids) override;
  Result<std::vector<wire::Series>> Select(const std::vector<Matcher>& matchers, int64_t mint_ms,
                                           int64_t maxt_ms) const override;
  Result<std::unique_ptr<SeriesSelection>> SelectSeries(const std::vector<Matcher>& matchers,
                                                        int64_t mint_ms,
                                                        int64_t maxt_ms) const override;
  Result<std::unique_ptr<SeriesSelection>> SelectLast(const std::vector<Matcher>& matchers,
                                                      int64_t mint_ms,
                                                      int64_t maxt_ms) const override;
  Result<std::vector<wire::Labels>> SeriesLabels(const std::vector<Matcher>& matchers,
                                                 int64_t mint_ms, int64_t maxt_ms) const override;
  std::vector<LatestPoint> Latest(int64_t since_ms, bool with_labels) const override;
  std::optional<wire::Labels> LabelsOf(uint64_t series_id) const override;
  std::vector<wire::MetricFamily> Families() const override;
  Status Maintain() override;
  Status Sync() override;
  DbStats Stats() const override;
  Status Close() override;

 private:
  // SelectSeries and SelectLast: with last_only, a series whose newest sample
  // is in range gets that sample alone, from the head.
  Result<std::unique_ptr<SeriesSelection>> SelectImpl(const std::vector<Matcher>& matchers,
                                                      int64_t mint_ms, int64_t maxt_ms,
                                                      bool last_only) const;
  // Whether hs.last, the series' newest sample, is still kept (retention
  // drops whole days of persisted chunks). Under mu_.
  bool NewestKept(const HeadSeries& hs) const;
  struct NewSeries {
    uint64_t id;
    wire::Labels labels;
    uint64_t segment;  // WAL segment that records it
  };
  struct NewFamily {
    wire::MetricFamily family;
    uint64_t segment;
  };

  // Open, in db.cc.
  Status LockDir();
  Status LoadCatalog();
  Status LoadPersisted();
  Status ReplayWal();
  Status ApplyRecord(uint64_t segment, std::string_view body);
  void AddSeriesLocked(uint64_t id, const wire::Labels& labels, uint64_t segment);
  Status NoteFamilyLocked(const wire::MetricFamily& f, std::vector<std::string>* records);
  Result<uint64_t> SeriesIdLocked(const wire::Labels& labels, std::vector<std::string>* records);

  // Maintenance, in db_maintain.cc.
  Status PersistCatalog();
  Status PersistChunks(int64_t now_ms, std::vector<PendingChunk> pending);
  Status DropWalSegments();
  Status RefreshStoreMinTime();
  uint64_t OldestNeededSegmentLocked() const;
  void BackgroundLoop();

  const Options options_;
  Env* const env_;
  const std::string wal_dir_;
  mutable DirSizeCache disk_bytes_;  // Stats() is scraped every second
  int lock_fd_ = -1;
  std::unique_ptr<Catalog> catalog_;
  std::unique_ptr<ChunkStore> store_;

  std::mutex maintain_mu_;

  mutable std::mutex mu_;
  SeriesIndex index_;
  Head head_;
  std::unique_ptr<WalWriter> wal_;
  std::map<std::string, wire::MetricFamily> families_;
  std::vector<NewSeries> new_series_;  // not yet in the catalog
  std::vector<NewFamily> new_families_;
  uint64_t next_id_ = 1;
  bool closed_ = false;
  uint64_t samples_appended_ = 0;
  uint64_t samples_out_of_order_ = 0;
  uint64_t persisted_chunks_ = 0;
  int64_t max_time_ = kNoTime;
  // Oldest persisted sample, refreshed by Open and Maintain so that Stats()
  // (scraped often by /metrics) does no SQLite I/O.
  int64_t store_min_time_ = kNoTime;

  std::mutex bg_mu_;
  std::condition_variable bg_cv_;
  bool stop_ = false;
  std::thread bg_;
};

}  // namespace vigil::tsdb

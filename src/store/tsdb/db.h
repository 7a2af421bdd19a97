// The embedded time-series store (DESIGN.md "Storage"): a series index, an
// in-memory head backed by a WAL, and closed chunks persisted per day partition
// in SQLite. Raw retention is whole-partition deletion.
//
// On-disk layout under Options::dir (formats in docs/tsdb.md):
//   catalog.db            series (id, labels), metric metadata
//   wal/NNNNNNNN.wal      head write-ahead log segments
//   chunks/YYYY-MM-DD.db  closed chunks of that UTC day
//
// Durability: the WAL is synced at least every Options::wal_sync_interval_ms, so
// after kill -9 at most that much of the most recent data is missing and
// nothing is corrupt (a torn WAL tail is detected by checksum and dropped).
//
// Thread safety: all public methods may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "wire/metric_batch.h"

namespace vigil::tsdb {

struct Options {
  std::string dir;
  Env* env = Env::Default();
  int64_t retention_ms = 30LL * 24 * 3600 * 1000;  // raw tier
  // Chunks are cut at aligned window boundaries; a window never spans two UTC days.
  int64_t chunk_window_ms = 2LL * 3600 * 1000;
  int64_t wal_sync_interval_ms = 1000;
};

enum class MatchType { kEqual, kNotEqual, kRegex, kNotRegex };

// A label matcher as in PromQL: name op "value". Regexes are fully anchored
// (RE2 syntax). A matcher on a missing label sees the empty string.
struct Matcher {
  MatchType type = MatchType::kEqual;
  std::string name;
  std::string value;
};

struct LatestPoint {
  uint64_t series_id = 0;  // the series' id in this store: stable while it exists
  wire::Labels labels;     // empty when Latest was asked for ids only
  wire::Sample sample;
};

struct DbStats {
  uint64_t series = 0;
  uint64_t samples_appended = 0;      // since open
  uint64_t samples_out_of_order = 0;  // dropped: at or before the series' last time
  uint64_t head_samples = 0;          // in memory, not yet in a closed chunk
  uint64_t persisted_chunks = 0;      // since open
  uint64_t disk_bytes = 0;            // everything under dir
  int64_t min_time_ms = 0;            // oldest sample kept (0 if none)
  int64_t max_time_ms = 0;            // newest sample (0 if none)
};

// The series a selection matched, read one at a time (Db::SelectSeries).
// Holds a snapshot taken at selection time (head samples copied, chunk bytes
// read) and decodes a series only when asked, so a long range query never has
// every sample of every series in memory at once.
//
// Thread safety: immutable after creation; Samples() may be called
// concurrently (each caller with its own buffer).
class SeriesSelection {
 public:
  virtual ~SeriesSelection() = default;
  // Series matched, sorted by labels. Some may have no sample in the range.
  virtual size_t size() const = 0;
  virtual const wire::Labels& labels(size_t i) const = 0;
  // Replaces *out with series i's samples in the range, by time. The buffer
  // is meant to be reused across calls: its capacity is kept.
  virtual Status Samples(size_t i, std::vector<wire::Sample>* out) const = 0;
};

class Db {
 public:
  // Opens or creates the store and replays the WAL into the head.
  static Result<std::unique_ptr<Db>> Open(const Options& options);
  virtual ~Db() = default;

  // Appends every sample of the batch and records its metric metadata.
  // Series are created on first sight. A sample at or before its series' last
  // timestamp is dropped and counted (DbStats::samples_out_of_order), not an error.
  // With `ids`, also returns the store's id of each of the batch's series, in
  // batch order (a series id never changes: docs/tsdb.md "Data model"), so a
  // caller can follow series from batch to batch without hashing labels.
  virtual Status Append(const wire::MetricBatch& batch, std::vector<uint64_t>* ids) = 0;
  Status Append(const wire::MetricBatch& batch) { return Append(batch, nullptr); }

  // Series matching all matchers with their samples in [mint_ms, maxt_ms],
  // from persisted chunks and the head, sorted by labels then time. Values
  // only: staleness markers (stale.h) are left out, and a series with nothing
  // else in range with them.
  virtual Result<std::vector<wire::Series>> Select(const std::vector<Matcher>& matchers,
                                                   int64_t mint_ms, int64_t maxt_ms) const = 0;

  // The same selection, decoded lazily per series (see SeriesSelection),
  // staleness markers included: for readers that honour them (PromQL).
  virtual Result<std::unique_ptr<SeriesSelection>> SelectSeries(
      const std::vector<Matcher>& matchers, int64_t mint_ms, int64_t maxt_ms) const = 0;

  // The same selection for readers of the newest sample in [mint_ms,
  // maxt_ms] alone (an instant vector selector): a series whose newest sample
  // (a staleness marker included) is at or before maxt_ms gets that sample
  // only, from the head, nothing copied or decoded; a series with samples
  // after maxt_ms (a range in the past) gets its samples in range, as
  // SelectSeries gives them.
  virtual Result<std::unique_ptr<SeriesSelection>> SelectLast(const std::vector<Matcher>& matchers,
                                                              int64_t mint_ms,
                                                              int64_t maxt_ms) const = 0;

  // Labels of the series matching all matchers that have data in
  // [mint_ms, maxt_ms], sorted, without reading samples: a persisted chunk
  // counts when its time bounds overlap the range (as Prometheus' series
  // API). With the whole time range, only the series index is consulted.
  virtual Result<std::vector<wire::Labels>> SeriesLabels(const std::vector<Matcher>& matchers,
                                                         int64_t mint_ms,
                                                         int64_t maxt_ms) const = 0;

  // The last sample of each series whose last sample is at or after since_ms,
  // except series whose last sample is a staleness marker (they have ended),
  // in series id order. Without `with_labels`, only ids and samples: a
  // caller that keeps each series' labels (or their rendering) by id asks
  // LabelsOf for the ids it has not seen, instead of copying every label of
  // every series each time.
  virtual std::vector<LatestPoint> Latest(int64_t since_ms, bool with_labels = true) const = 0;
  // The labels of series `series_id`; nullopt when there is no such series.
  virtual std::optional<wire::Labels> LabelsOf(uint64_t series_id) const = 0;
  // Metadata (type, help) of every metric name seen.
  virtual std::vector<wire::MetricFamily> Families() const = 0;

  // Cuts chunks whose window has ended, persists them, truncates the WAL and
  // applies retention. Runs by itself in the background; callable for tests.
  virtual Status Maintain() = 0;
  // Syncs the WAL now.
  virtual Status Sync() = 0;
  virtual DbStats Stats() const = 0;
  // Syncs and stops background work. Open chunks stay in the WAL for the next
  // Open (nothing is lost). Called by the destructor if not called before.
  virtual Status Close() = 0;
};

}  // namespace vigil::tsdb

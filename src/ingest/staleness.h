// StalenessTracker: which series ended between two collection passes of one
// source, so the ingester can write a staleness marker for each
// (store/tsdb/stale.h), as Prometheus does for a series that vanishes from a
// scrape. Without markers a vanished series answers its last value for the
// whole five-minute PromQL lookback: a GPU lost after Xid 79 would still read
// 98 % utilisation, an exited process would still hold its GPU memory, and
// alerts on them would fire on stale values (docs/tsdb.md "Staleness
// markers").
//
// A pass is a batch with pass_time_ms set (wire::MetricBatch): one complete
// run of an agent's collectors. Its *pass series* are those whose samples are
// all at the pass time. Series with times of their own (TensorBoard and MLflow
// values, recorded earlier) are not passes' members and never marked here,
// like Prometheus' samples with explicit timestamps: their absence from a pass
// means nothing (their job's end marks them: ended_jobs.h).
//
// For each source (node) the tracker keeps the store's ids of its last
// pass's series (and their labels, copied when a series first appears, to
// write markers with). Observe(), called once the pass is stored, returns the
// series of that pass that the new one lacks, each with one marker at the new
// pass time, and makes the new pass the last. A series that was marked and
// comes back is simply a member again. Collectors emit the same series in the
// same order pass after pass, so the usual check is one comparison of two id
// arrays: no label is hashed or copied.
//
// Restarts: the sets live in memory only. After a server restart the first
// pass of each source starts a new set and marks nothing, so a restart never
// writes a false marker (series that ended while the server was down fade
// after the lookback, as before). After an agent restart its first pass is
// compared with the pass before the restart: series that did not come back
// are marked at that pass's time. A source that goes silent is not marked:
// its agent's outbox may still deliver the gap, whose samples a marker would
// make out of order.
//
// Order: a pass older than the source's last is ignored (it marks nothing,
// changes nothing).
//
// Bounded: at most max_sources sources (the least recently seen is
// forgotten, which only means its next pass marks nothing) and
// max_series_per_source series each (more are not tracked, so not marked).
//
// Thread safety: all methods may be called concurrently; mu_ guards
// everything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "wire/metric_batch.h"

namespace vigil::ingest {

struct StalenessStats {
  uint64_t markers = 0;           // staleness markers returned
  uint64_t untracked_series = 0;  // pass series over max_series_per_source
  uint64_t sources_evicted = 0;   // over max_sources
  uint64_t old_passes = 0;        // older than a source's last pass: ignored
  size_t tracked_series = 0;      // now, over all sources
};

struct StalenessOptions {
  size_t max_sources = 4096;
  size_t max_series_per_source = 200'000;
};

class StalenessTracker {
 public:
  explicit StalenessTracker(StalenessOptions options = {}) : options_(options) {}

  // For a pass (pass_time_ms != 0) from the source `key` (an agent's node
  // name; a Pushgateway group), as stored (labels normalised, node label
  // included), with `ids` the store's series ids of pass.series
  // (tsdb::Db::Append): the series of the source's last pass that this one
  // lacks, each with one sample, the staleness marker at the pass time.
  // Nothing for a batch that is not a pass. With `only_names`, the pass
  // replaces only the series of those metric names (a Pushgateway POST); the
  // source's other series stay as they were.
  std::vector<wire::Series> Observe(const std::string& key, const wire::MetricBatch& pass,
                                    const std::vector<uint64_t>& ids,
                                    const std::vector<std::string>* only_names = nullptr);

  StalenessStats Stats() const;

 private:
  struct Source {
    int64_t pass_time_ms = 0;
    std::vector<uint64_t> ids;                          // the last pass's, in its order
    std::unordered_map<uint64_t, wire::Labels> labels;  // of each id in `ids`
    std::list<std::string>::iterator lru;
  };

  Source* SourceFor(const std::string& name);  // under mu_
  // Records the pass (its series `ids`, in order) in `src` and returns the
  // labels of the last pass's series it lacks (under mu_).
  std::vector<wire::Labels> Diff(const wire::MetricBatch& pass, const std::vector<size_t>& members,
                                 const std::vector<uint64_t>& ids,
                                 const std::vector<std::string>* only_names, Source* src);

  StalenessOptions options_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Source> sources_;  // guarded by mu_
  std::list<std::string> lru_;                       // most recent first; guarded by mu_
  StalenessStats stats_;                             // guarded by mu_ (tracked_series computed)
};

}  // namespace vigil::ingest

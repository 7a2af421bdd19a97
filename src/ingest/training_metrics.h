// TrainingMetricsFromLogs: turns the training metrics that jobs print in
// their logs (loss, learning rate, grad norm, throughput, step, epoch, and
// any other value a trainer prints) into series, as the log lines are
// ingested (docs/training-metrics.md "Stored series").
//
// It runs on the server, where every agent's log batches arrive, so one rule
// covers every agent and agents stay lean. Each line is read exactly once:
// the caller passes the offsets the log store had committed before storing
// the batch, and only records at or after them are read (a retried batch, or
// lines re-read after an agent crash, add nothing).
//
// A series is `training_<metric>` (e.g. training_loss, training_eval_loss)
// with the labels of the log stream (job, container, node, source, ...); its
// samples are timed by the log line. A record that holds several values of
// one metric ('\r' progress updates) gives its last. Lines read in one go
// share their read time: a value that would not be later than its series'
// previous one is placed 1 ms after it, so none is lost as a duplicate.
// A series takes at most `rate_per_second` values per second of line time,
// with bursts of `burst`: trainers print a few lines a second, so that is
// every value, while a flood cannot fill the metrics store (whose head keeps
// raw samples); values over it are counted as thinned (`vigil inspect-log`
// shows them all).
//
// Bounded: at most max_sources extractors (the least recently used is
// dropped) and max_names_per_source metric names per source (more are
// counted, not stored).
//
// Thread safety: Extract() may be called concurrently.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parse/training/log_metrics.h"
#include "wire/log_batch.h"
#include "wire/metric_batch.h"

namespace vigil::ingest {

using parse::training::kTrainingMetricPrefix;
using parse::training::TrainingSeriesName;

struct TrainingMetricsStats {
  uint64_t samples = 0;        // stored
  uint64_t thinned = 0;        // over a series' rate (Options::rate_per_second)
  uint64_t names_dropped = 0;  // samples of names over a source's budget
  uint64_t sources_evicted = 0;
  uint64_t records_skipped = 0;  // not parsed: all their values would be thinned
};

class TrainingMetricsFromLogs {
 public:
  struct Options {
    size_t max_sources = 4096;
    size_t max_names_per_source = 64;
    double rate_per_second = 100;
    double burst = 1000;
    // During a flood, a record is not parsed when the last record of its
    // template (the same text but for its digits) gave only values whose
    // series are now over their rate: its values would all be thinned
    // (they are counted so). Parsing is most of the cost of a flood.
    bool skip_saturated_templates = true;
  };
  TrainingMetricsFromLogs();
  explicit TrainingMetricsFromLogs(Options options);
  ~TrainingMetricsFromLogs();

  // Reads the records of batch.streams[i] that begin at or after
  // committed[i] and appends the samples found to *out (series labels from
  // the stream, which the caller has normalised, node included).
  void Extract(const wire::LogBatch& batch, const std::vector<uint64_t>& committed,
               wire::MetricBatch* out);

  TrainingMetricsStats Stats() const;

 private:
  struct SeriesState;
  struct SourceState;
  struct StreamOutput;
  SourceState* StateFor(const std::string& key);  // under mu_
  // The rest under mu_ too. One record's values, rate-limited, into `output`.
  void ExtractRecord(const wire::LogRecord& rec, SourceState* state, StreamOutput* output);
  // The series of a metric name in a source; nullptr when the name has no
  // usable character or the source is over its budget of names.
  SeriesState* SeriesFor(SourceState* state, const std::string& metric, int64_t line_ms);
  // Appends one value at `t` to the stream's series in the output.
  void Emit(const SeriesState& ss, const parse::training::MetricSample& sample, int64_t t,
            StreamOutput* output);
  // Token bucket of a series, brought up to line_ms.
  void Refill(SeriesState* ss, int64_t line_ms) const;
  // Refills them all; true when none may take a value at line_ms.
  bool AllOutOfTokens(const std::vector<SeriesState*>& series, int64_t line_ms) const;

  Options options_;
  mutable std::mutex mu_;
  std::list<std::string> lru_;  // most recent first
  std::unordered_map<std::string, std::unique_ptr<SourceState>> sources_;
  TrainingMetricsStats stats_;
  std::vector<SeriesState*> checked_;                 // of the record being read; reused
  std::vector<parse::training::MetricSample> found_;  // of the record being read; reused
};

}  // namespace vigil::ingest

// Ingester: the server's one entry for data, whoever sends it. Decodes an
// agent's wire frame, validates it, drops a batch it has already stored
// (retries), tags every series and log stream with the node it came from, and
// appends it to the metrics store (frame kind 1) or the log store (kind 2); a
// node's jobs snapshot (kind 4) goes to the jobs store (job_store.h). The
// standard protocols' receivers (Pushgateway, OTLP: api/push_routes.h,
// api/otlp_routes.h) decode with ingest's decoders and store through
// AppendMetrics, so every write passes the same checks and counters, and a
// second storage backend later sees every write here.
//
// An agent's metrics batch is one complete collection pass: a series of the
// node's previous pass that this one lacks (an exited process, a GPU that
// fell off the bus) gets a staleness marker at the pass time, stored with the
// pass, so PromQL stops answering it at once (staleness.h). Batches of the
// standard protocols are not passes; Pushgateway groups get markers of their
// own when deleted or replaced (PushGroup). Training series (times of their
// own, no pass) get one when the node's jobs snapshot says their job ended
// (ended_jobs.h).
//
// Thread safety: Receive() may be called concurrently; the mutex guards the
// per-source sequence map and the counters (the staleness tracker has its own).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/env.h"
#include "core/status.h"
#include "ingest/ended_jobs.h"
#include "ingest/job_store.h"
#include "ingest/staleness.h"
#include "ingest/training_metrics.h"
#include "store/logs/log_store.h"
#include "store/tsdb/db.h"

namespace vigil::ingest {

// Every series stored from an agent carries node="<agent source>", so one
// server can hold a fleet (docs/wire.md).
inline constexpr std::string_view kNodeLabel = "node";

struct IngestStats {
  uint64_t batches = 0;
  uint64_t samples = 0;
  uint64_t duplicate_batches = 0;  // retried batches dropped by sequence
  uint64_t rejected_batches = 0;   // undecodable or invalid
  uint64_t log_batches = 0;
  uint64_t log_records = 0;             // received (the log store counts offset duplicates)
  TrainingMetricsStats training;        // read from log lines (training_metrics.h)
  uint64_t training_append_errors = 0;  // batches of them the metrics store refused
  uint64_t job_snapshots = 0;           // nodes' jobs snapshots kept (job_store.h)
  // Of `batches`/`samples`: from the standard protocols' receivers
  // (AppendMetrics), not from agents.
  uint64_t protocol_batches = 0;
  uint64_t protocol_samples = 0;
  StalenessStats staleness;       // agents' series that ended (staleness.h)
  StalenessStats push_staleness;  // Pushgateway groups' series that ended
  uint64_t job_end_markers = 0;   // training series of jobs that ended (ended_jobs.h)
};

struct IngesterOptions {
  // Read training metrics from stored log lines into `training_*` series
  // (training_metrics.h). Off only to measure the log path alone (bench/).
  bool training_metrics = true;
  // Where nodes' jobs snapshots go; nullptr refuses them.
  JobStore* job_store = nullptr;
  StalenessOptions staleness;
  EndedJobsOptions ended_jobs;
  Env* env = Env::Default();  // the clock that times the ended jobs' grace
};

class Ingester {
 public:
  // `logs` may be null: log frames are then refused (a metrics-only server).
  explicit Ingester(tsdb::Db* db, logstore::LogStore* logs = nullptr, IngesterOptions options = {})
      : db_(db),
        logs_(logs),
        options_(options),
        staleness_(options.staleness),
        push_staleness_(options.staleness),
        ended_jobs_(options.ended_jobs) {}

  // InvalidArgument/Corruption: the sender's data is bad (do not retry as is).
  // Other errors: the server could not store it now (retry).
  Status Receive(std::string_view frame);
  // The same for a log batch handed over in-process (`vigil up`), without a
  // frame. Normalises the streams' labels in place (drops empty values, sets
  // node); calling it again with the same batch is a retry like any other.
  Status ReceiveLogBatch(wire::LogBatch* batch);
  // A metrics batch from an in-process agent (`vigil up`), without a frame:
  // the same checks, deduplication by sequence and node label as a decoded
  // frame's. Labels are normalised in place.
  Status ReceiveMetricBatch(wire::MetricBatch* batch);
  // A batch decoded by a standard protocol's receiver on this server
  // (Pushgateway, OTLP): no sequence to deduplicate by. Validated, tagged
  // with node="<batch->source>" and stored; InvalidArgument for names outside
  // the Prometheus data model, other errors when the store cannot take it now.
  Status AppendMetrics(wire::MetricBatch* batch);
  // A Pushgateway push (api/push_routes.h) to `group` (its grouping key),
  // stored as AppendMetrics does. It replaces what the group held: all of
  // its series (PUT; a DELETE is a PUT of an empty batch) or, with
  // whole_group false, those of the metric names it pushes (POST). Series of
  // the group's earlier pushes that it replaces and lacks get a staleness
  // marker at batch->pass_time_ms, the push time (none when it is 0).
  // Remembered in memory only: after a server restart the first push to a
  // group marks nothing.
  Status PushGroup(const std::string& group, bool whole_group, wire::MetricBatch* batch);
  IngestStats Stats() const;

 private:
  Status ReceiveMetrics(std::string_view payload);
  Status ReceiveLogs(std::string_view payload);
  Status ReceiveJobs(std::string_view payload);
  // Which tracker decides what a batch ends (staleness.h), and for what.
  struct PassOf {
    StalenessTracker* tracker = nullptr;  // null: not a pass
    std::string key;
    const std::vector<std::string>* only_names = nullptr;
  };
  // Tags and stores a validated batch (every metrics path), then the
  // staleness markers of the series its pass ends.
  Status StoreMetrics(wire::MetricBatch* batch, bool from_agent, const PassOf& pass);
  Status Reject(Status st);
  // Marks the training series of the node's jobs that are due (ended_jobs.h)
  // as ended. Best effort: the data that led here is stored either way.
  void EndTrainingSeries(const std::string& node);

  tsdb::Db* db_;
  logstore::LogStore* logs_;
  IngesterOptions options_;
  TrainingMetricsFromLogs training_;
  StalenessTracker staleness_;       // agents' passes, by node
  StalenessTracker push_staleness_;  // Pushgateway groups, by grouping key
  EndedJobs ended_jobs_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, uint64_t> last_sequence_;  // guarded by mu_
  IngestStats stats_;                                        // guarded by mu_
};

}  // namespace vigil::ingest

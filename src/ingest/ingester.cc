#include "ingest/ingester.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "core/log.h"
#include "store/tsdb/stale.h"
#include "wire/frame.h"
#include "wire/jobs.h"
#include "wire/log_batch.h"
#include "wire/metric_batch.h"

namespace vigil::ingest {
namespace {

// Character classes of name bytes, looked up rather than compared range by
// range: every label name of every series passes through here.
constexpr uint8_t kFirst = 1;  // may start a name: [a-zA-Z_]
constexpr uint8_t kDigit = 2;  // may follow the first byte: [0-9]
constexpr uint8_t kColon = 4;  // allowed anywhere in metric names only
constexpr auto kNameClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c) t[c] = kFirst;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = kFirst;
  t['_'] = kFirst;
  for (int c = '0'; c <= '9'; ++c) t[c] = kDigit;
  t[':'] = kColon;
  return t;
}();

bool ValidName(std::string_view n, bool allow_colon) {
  if (n.empty()) return false;
  const uint8_t allowed_first = kFirst | (allow_colon ? kColon : 0);
  const uint8_t allowed_rest = allowed_first | kDigit;
  if ((kNameClass[static_cast<uint8_t>(n[0])] & allowed_first) == 0) return false;
  for (size_t i = 1; i < n.size(); ++i) {
    if ((kNameClass[static_cast<uint8_t>(n[i])] & allowed_rest) == 0) return false;
  }
  return true;
}

// Checks names against the Prometheus data model, so everything stored can be
// exposed and queried with standard tools.
Status Validate(const wire::MetricBatch& b) {
  if (b.source.empty()) return InvalidArgument("metric batch has no source node name");
  for (const auto& s : b.series) {
    std::string_view name = wire::MetricName(s.labels);
    if (!ValidName(name, true)) {
      return InvalidArgument("invalid metric name '" + std::string(name) + "'");
    }
    // The decoder's bounds, for batches handed over in process too.
    if (s.labels.size() > wire::kMaxLabelsPerSeries) {
      return InvalidArgument("too many labels on " + std::string(name));
    }
    for (const auto& l : s.labels) {
      if (l.value.size() > wire::kMaxLabelBytes) {
        return InvalidArgument("label " + l.name + " too long on " + std::string(name));
      }
      if (l.name != wire::kMetricNameLabel && !ValidName(l.name, false)) {
        return InvalidArgument("invalid label name '" + l.name + "' on " + std::string(name));
      }
    }
  }
  return Status::Ok();
}

// Labels strictly sorted by name with no empty value: what the decoder
// produces, so NormalizeLabels would leave them as they are.
bool SortedUnique(const wire::Labels& labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].value.empty()) return false;
    if (i > 0 && !(labels[i - 1].name < labels[i].name)) return false;
  }
  return true;
}

void SetLabel(wire::Labels* labels, std::string_view name, const std::string& value) {
  auto it = std::lower_bound(labels->begin(), labels->end(), name,
                             [](const wire::Label& l, std::string_view n) { return l.name < n; });
  if (it != labels->end() && it->name == name) {
    it->value = value;
  } else {
    labels->insert(it, {std::string(name), value});
  }
}

void AddNodeLabel(wire::MetricBatch* b) {
  for (auto& s : b->series) {
    // The common case: setting or inserting the node label in place keeps the
    // order, with the same result as the erase, append and sort below but
    // without sorting every series of every batch. (Validate rejected an
    // empty source, so the node label's value is never empty.)
    if (SortedUnique(s.labels)) {
      SetLabel(&s.labels, kNodeLabel, b->source);
      continue;
    }
    std::erase_if(s.labels, [](const wire::Label& l) { return l.name == kNodeLabel; });
    s.labels.push_back({std::string(kNodeLabel), b->source});
    wire::NormalizeLabels(&s.labels);
  }
}

// Log streams carry free-form labels from discovery (container names, pod
// names): their names must still be valid label names so they can be queried.
Status ValidateLogs(const wire::LogBatch& b) {
  if (b.source.empty()) return InvalidArgument("log batch has no source node name");
  for (const auto& s : b.streams) {
    for (const auto& l : s.labels) {
      if (!ValidName(l.name, false)) {
        return InvalidArgument("invalid label name '" + l.name + "' on log source " + s.source_id);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status Ingester::Reject(Status st) {
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.rejected_batches;
  return st;
}

Status Ingester::Receive(std::string_view frame) {
  auto decoded = wire::DecodeFrame(frame);
  if (!decoded.ok()) return Reject(decoded.status());
  if (decoded->kind == wire::FrameKind::kLogs) return ReceiveLogs(decoded->payload);
  if (decoded->kind == wire::FrameKind::kJobs) return ReceiveJobs(decoded->payload);
  return ReceiveMetrics(decoded->payload);
}

Status Ingester::ReceiveJobs(std::string_view payload) {
  if (options_.job_store == nullptr) {
    return Reject(FailedPrecondition("this server does not keep nodes' jobs"));
  }
  Status st = options_.job_store->Receive(payload);
  if (!st.ok()) return Reject(st);
  auto snapshot = wire::DecodeJobsSnapshot(payload);  // the store took it: it decodes
  if (snapshot.ok()) {
    ended_jobs_.Note(*snapshot, options_.env->NowMillis());
    EndTrainingSeries(snapshot->node);
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.job_snapshots;
  return Status::Ok();
}

void Ingester::EndTrainingSeries(const std::string& node) {
  std::vector<EndedJob> due = ended_jobs_.TakeDue(node, options_.env->NowMillis());
  if (due.empty() || db_ == nullptr) return;
  wire::MetricBatch markers;
  markers.source = node;
  std::vector<wire::Sample> buf;
  for (const EndedJob& job : due) {
    // The run's own series; else, for series without runs, those of the name.
    auto select = [&](const char* label, const std::string& value) {
      std::vector<tsdb::Matcher> m = {{tsdb::MatchType::kRegex, std::string(wire::kMetricNameLabel),
                                       std::string(kTrainingMetricPrefix) + ".+"},
                                      {tsdb::MatchType::kEqual, std::string(kNodeLabel), node},
                                      {tsdb::MatchType::kEqual, label, value}};
      return db_->SelectSeries(m, job.end_ms - options_.ended_jobs.max_age_ms, INT64_MAX);
    };
    auto sel = select("run", job.id);
    bool by_name = sel.ok() && (*sel)->size() == 0;
    if (by_name) {
      if (job.name_running) continue;
      sel = select("job", job.name);
    }
    if (!sel.ok()) continue;
    for (size_t i = 0; i < (*sel)->size(); ++i) {
      // By name: other runs' series carry their own run, not this job's.
      const wire::Labels& labels = (*sel)->labels(i);
      if (by_name && std::any_of(labels.begin(), labels.end(),
                                 [](const wire::Label& l) { return l.name == "run"; })) {
        continue;
      }
      if (!(*sel)->Samples(i, &buf).ok() || buf.empty() || tsdb::IsStaleNaN(buf.back().value)) {
        continue;
      }
      // At the job's end, or just after a value timed later (read after it).
      const int64_t t = std::max(job.end_ms, buf.back().t_ms + 1);
      markers.series.push_back({(*sel)->labels(i), {{t, tsdb::StaleNaN()}}});
    }
  }
  if (markers.series.empty()) return;
  Status st = db_->Append(markers);
  if (!st.ok()) {
    Logf(LogLevel::kWarn, "ended jobs' training series not marked: %s", st.ToString().c_str());
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  stats_.job_end_markers += markers.series.size();
}

Status Ingester::ReceiveMetrics(std::string_view payload) {
  auto batch = wire::DecodeMetricBatch(payload);
  if (!batch.ok()) return Reject(batch.status());
  return ReceiveMetricBatch(&*batch);
}

Status Ingester::ReceiveMetricBatch(wire::MetricBatch* batch) {
  Status valid = Validate(*batch);
  if (!valid.ok()) return Reject(valid);

  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = last_sequence_.find(batch->source);
    if (it != last_sequence_.end() && batch->sequence <= it->second) {
      ++stats_.duplicate_batches;
      return Status::Ok();  // already stored: acknowledge again, store nothing
    }
  }
  VIGIL_RETURN_IF_ERROR(StoreMetrics(&*batch, /*from_agent=*/true, {&staleness_, batch->source}));
  {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t& last = last_sequence_[batch->source];
    last = std::max(last, batch->sequence);
  }
  // Passes come every second, snapshots every ten: the grace ends on time.
  EndTrainingSeries(batch->source);
  return Status::Ok();
}

Status Ingester::AppendMetrics(wire::MetricBatch* batch) {
  Status valid = Validate(*batch);
  if (!valid.ok()) return Reject(valid);
  return StoreMetrics(batch, /*from_agent=*/false, {});
}

Status Ingester::PushGroup(const std::string& group, bool whole_group, wire::MetricBatch* batch) {
  Status valid = Validate(*batch);
  if (!valid.ok()) return Reject(valid);
  std::vector<std::string> names;
  if (!whole_group) {
    for (const wire::Series& s : batch->series) names.emplace_back(wire::MetricName(s.labels));
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
  }
  return StoreMetrics(batch, /*from_agent=*/false,
                      {&push_staleness_, group, whole_group ? nullptr : &names});
}

Status Ingester::StoreMetrics(wire::MetricBatch* batch, bool from_agent, const PassOf& pass) {
  AddNodeLabel(batch);
  if (pass.tracker == nullptr) {
    VIGIL_RETURN_IF_ERROR(db_->Append(*batch));
  } else {
    // The tracker follows series by their store ids (no label hashing), so
    // it learns of the pass once it is stored; the markers follow in a
    // second append (a crash between loses only them: the series then fade
    // after the lookback, as without markers).
    std::vector<uint64_t> ids;
    VIGIL_RETURN_IF_ERROR(db_->Append(*batch, &ids));
    wire::MetricBatch markers;
    markers.source = batch->source;
    markers.series = pass.tracker->Observe(pass.key, *batch, ids, pass.only_names);
    Status st = markers.series.empty() ? Status::Ok() : db_->Append(markers);
    if (!st.ok()) Logf(LogLevel::kWarn, "staleness markers not stored: %s", st.ToString().c_str());
  }
  const uint64_t samples = batch->SampleCount();
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.batches;
  stats_.samples += samples;
  if (!from_agent) {
    ++stats_.protocol_batches;
    stats_.protocol_samples += samples;
  }
  return Status::Ok();
}

// No sequence check here: the log store drops already-stored records by
// source offset (docs/wire.md "Exactly-once for logs"), which also holds
// across agent restarts and server crashes.
Status Ingester::ReceiveLogs(std::string_view payload) {
  auto batch = wire::DecodeLogBatch(payload);
  if (!batch.ok()) return Reject(batch.status());
  return ReceiveLogBatch(&*batch);
}

Status Ingester::ReceiveLogBatch(wire::LogBatch* batch) {
  if (logs_ == nullptr) {
    return Reject(FailedPrecondition("this server does not store logs"));
  }
  Status valid = ValidateLogs(*batch);
  if (!valid.ok()) return Reject(valid);
  std::vector<uint64_t> committed;  // before this batch: training metrics read each line once
  committed.reserve(batch->streams.size());
  for (auto& s : batch->streams) {
    std::erase_if(s.labels, [](const wire::Label& l) { return l.value.empty(); });
    SetLabel(&s.labels, kNodeLabel, batch->source);
    committed.push_back(logs_->CommittedOffset(batch->source, s.source_id));
  }
  VIGIL_RETURN_IF_ERROR(logs_->Append(batch->source, *batch));

  // The lines are stored: a failure here must not make the agent resend them.
  wire::MetricBatch training;
  training.source = batch->source;
  if (db_ != nullptr && options_.training_metrics) training_.Extract(*batch, committed, &training);
  Status metrics = training.series.empty() ? Status::Ok() : db_->Append(training);
  if (!metrics.ok()) {
    Logf(LogLevel::kWarn, "training metrics from logs not stored: %s", metrics.ToString().c_str());
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.log_batches;
  stats_.log_records += batch->RecordCount();
  stats_.training_append_errors += !metrics.ok();
  return Status::Ok();
}

IngestStats Ingester::Stats() const {
  TrainingMetricsStats training = training_.Stats();
  std::lock_guard<std::mutex> lock(mu_);
  IngestStats out = stats_;
  out.training = training;
  out.staleness = staleness_.Stats();
  out.push_staleness = push_staleness_.Stats();
  return out;
}

}  // namespace vigil::ingest

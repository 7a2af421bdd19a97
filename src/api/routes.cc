#include "api/routes.h"

#include <unistd.h>

#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/json_writer.h"
#include "core/strings.h"
#include "net/exposition.h"
#include "wire/frame.h"

namespace vigil::api {
namespace {

using wire::MetricType;

using wire::LabelValue;

// One unlabelled server-side value and its family.
void AddPoint(std::vector<wire::MetricFamily>* families, std::vector<net::ExpositionPoint>* points,
              int64_t now, const char* name, MetricType type, const char* help, double v) {
  families->push_back({name, type, help});
  points->push_back({{{std::string(wire::kMetricNameLabel), name}}, {now, v}});
}

// The log store's totals, and per source what volume control sampled away or
// filtered, what was cut and what the agent lost unread: never silent
// (docs/log-api.md).
void AddLogStorePoints(const logstore::LogStore& logs, std::vector<wire::MetricFamily>* families,
                       std::vector<net::ExpositionPoint>* points, int64_t now) {
  logstore::LogStoreStats st = logs.Stats();
  auto add = [&](const char* name, MetricType type, const char* help, double v) {
    AddPoint(families, points, now, name, type, help, v);
  };
  add("vigil_logstore_streams", MetricType::kGauge, "Log streams in the log store.",
      static_cast<double>(st.streams));
  add("vigil_logstore_lines_appended_total", MetricType::kCounter, "Log lines stored since start.",
      static_cast<double>(st.lines));
  add("vigil_logstore_duplicate_lines_total", MetricType::kCounter,
      "Log lines dropped because their source offset was already stored (retries, restarts).",
      static_cast<double>(st.duplicate_lines));
  add("vigil_logstore_head_lines", MetricType::kGauge, "Log lines in memory not yet in a block.",
      static_cast<double>(st.head_lines));
  add("vigil_logstore_disk_bytes", MetricType::kGauge, "Bytes on disk of the log store.",
      static_cast<double>(st.disk_bytes));

  struct PerSource {
    const char* name;
    const char* help;
    uint64_t (*value)(const logstore::SourceTotals&);
  };
  static constexpr PerSource kPerSource[] = {
      {"vigil_log_lines_total", "Log lines stored, per source.",
       [](const logstore::SourceTotals& s) { return s.lines; }},
      {"vigil_log_bytes_total", "Bytes of log text stored, per source.",
       [](const logstore::SourceTotals& s) { return s.bytes; }},
      {"vigil_log_sampled_lines_total",
       "Log lines below WARN sampled away while the source flooded, per source.",
       [](const logstore::SourceTotals& s) { return s.counters.sampled_lines; }},
      {"vigil_log_filtered_lines_total", "Log lines below the configured level floor, per source.",
       [](const logstore::SourceTotals& s) { return s.counters.filtered_lines; }},
      {"vigil_log_truncated_lines_total", "Log lines cut at the line size cap, per source.",
       [](const logstore::SourceTotals& s) { return s.counters.truncated_lines; }},
      {"vigil_log_lost_bytes_total",
       "Bytes of log text known lost before they were read (truncated or rotated away unread), "
       "per source.",
       [](const logstore::SourceTotals& s) { return s.counters.lost_bytes; }},
  };
  std::vector<logstore::SourceTotals> sources = logs.Sources();
  for (const PerSource& m : kPerSource) {
    families->push_back({m.name, MetricType::kCounter, m.help});
    for (const auto& src : sources) {
      wire::Labels labels = src.labels;
      labels.push_back({std::string(wire::kMetricNameLabel), m.name});
      wire::NormalizeLabels(&labels);
      points->push_back({std::move(labels), {now, static_cast<double>(m.value(src))}});
    }
  }
}

// Server-side counters, which no collector sees, appended to /metrics.
void AddServerPoints(const CoreRouteDeps& deps, std::vector<wire::MetricFamily>* families,
                     std::vector<net::ExpositionPoint>* points, int64_t now) {
  auto add = [&](const char* name, MetricType type, const char* help, double v) {
    AddPoint(families, points, now, name, type, help, v);
  };
  tsdb::DbStats db = deps.db->Stats();
  add("vigil_tsdb_series", MetricType::kGauge, "Series in the metrics store.",
      static_cast<double>(db.series));
  add("vigil_tsdb_samples_appended_total", MetricType::kCounter,
      "Samples appended to the metrics store since start.",
      static_cast<double>(db.samples_appended));
  add("vigil_tsdb_out_of_order_samples_total", MetricType::kCounter,
      "Samples dropped because they were at or before their series' last sample.",
      static_cast<double>(db.samples_out_of_order));
  add("vigil_tsdb_head_samples", MetricType::kGauge, "Samples in memory not yet in a closed chunk.",
      static_cast<double>(db.head_samples));
  add("vigil_tsdb_disk_bytes", MetricType::kGauge, "Bytes on disk of the metrics store.",
      static_cast<double>(db.disk_bytes));
  ingest::IngestStats in = deps.ingester->Stats();
  add("vigil_ingest_batches_total", MetricType::kCounter, "Metric batches stored.",
      static_cast<double>(in.batches));
  add("vigil_ingest_duplicate_batches_total", MetricType::kCounter,
      "Retried metric batches acknowledged without storing them again.",
      static_cast<double>(in.duplicate_batches));
  add("vigil_ingest_rejected_batches_total", MetricType::kCounter,
      "Metric and log batches rejected as malformed or invalid.",
      static_cast<double>(in.rejected_batches));
  add("vigil_ingest_stale_markers_total", MetricType::kCounter,
      "Staleness markers written for series that ended: gone from their node's collection "
      "pass or their Pushgateway group, or training series of a job that ended.",
      static_cast<double>(in.staleness.markers + in.push_staleness.markers + in.job_end_markers));
  add("vigil_training_samples_total", MetricType::kCounter,
      "Training metric values read from log lines and stored (training_* series).",
      static_cast<double>(in.training.samples));
  add("vigil_training_thinned_samples_total", MetricType::kCounter,
      "Training metric values not stored: over their series' rate (100 a second).",
      static_cast<double>(in.training.thinned));
  add("vigil_training_dropped_samples_total", MetricType::kCounter,
      "Training metric values not stored: their source has too many metric names.",
      static_cast<double>(in.training.names_dropped));
  if (deps.logs != nullptr) AddLogStorePoints(*deps.logs, families, points, now);
}

// Each stored series' exposition text (net::RenderSeriesName) by series id,
// so a scrape every second renders only values and copies no labels: the
// text of a series never changes, and most series live for hours.
//
// Thread safety: Render may run on several HTTP threads at once; one mutex
// guards the texts (and a scrape's use of them).
class SeriesTextCache {
 public:
  // The exposition of the store's current series and `extra` points.
  std::string Render(const tsdb::Db& db, int64_t since_ms,
                     const std::vector<wire::MetricFamily>& families,
                     const std::vector<net::ExpositionPoint>& extra) {
    std::vector<tsdb::LatestPoint> latest = db.Latest(since_ms, /*with_labels=*/false);
    std::vector<std::string> extra_texts;
    std::vector<net::RenderedPoint> points;
    points.reserve(latest.size() + extra.size());
    std::lock_guard lock(mu_);
    std::unordered_map<uint64_t, Text> current;  // series gone since last time drop out
    current.reserve(latest.size());
    for (const tsdb::LatestPoint& p : latest) {
      auto it = texts_.find(p.series_id);
      Text t;
      if (it != texts_.end()) {
        t = std::move(it->second);
      } else if (auto labels = db.LabelsOf(p.series_id)) {
        t.text = net::RenderSeriesName(*labels);
        t.name_len = wire::MetricName(*labels).size();
      } else {
        continue;  // removed between the two calls
      }
      const Text& kept = current.emplace(p.series_id, std::move(t)).first->second;
      if (kept.text.empty()) continue;  // not renderable
      points.push_back(
          {std::string_view(kept.text).substr(0, kept.name_len), kept.text, p.sample.value});
    }
    texts_ = std::move(current);  // node-based: the views above stay valid
    extra_texts.reserve(extra.size());
    for (const net::ExpositionPoint& p : extra) {
      extra_texts.push_back(net::RenderSeriesName(p.labels));
    }
    for (size_t i = 0; i < extra.size(); ++i) {
      if (!extra_texts[i].empty()) {
        points.push_back(
            {wire::MetricName(extra[i].labels), extra_texts[i], extra[i].sample.value});
      }
    }
    return net::RenderExpositionOf(families, points);
  }

 private:
  struct Text {
    std::string text;  // "" when the series cannot be rendered
    size_t name_len = 0;
  };
  std::mutex mu_;
  std::unordered_map<uint64_t, Text> texts_;  // guarded by mu_
};

net::HttpResponse Metrics(const CoreRouteDeps& deps, SeriesTextCache* cache) {
  int64_t now = deps.env->NowMillis();
  std::vector<wire::MetricFamily> families = deps.db->Families();
  std::vector<net::ExpositionPoint> server;
  AddServerPoints(deps, &families, &server, now);
  net::HttpResponse r;
  r.content_type = std::string(net::kExpositionContentType);
  r.body = cache->Render(*deps.db, now - deps.staleness_ms, families, server);
  return r;
}

// The labels of every current series of one metric, as JSON objects.
void WriteGpuStatus(const std::vector<tsdb::LatestPoint>& latest, JsonWriter* w) {
  w->Key("gpu").BeginObject();
  for (const auto& p : latest) {
    std::string_view name = wire::MetricName(p.labels);
    if (name == "vigil_gpu_driver_info") {
      w->Key("state").String(LabelValue(p.labels, "state"));
      w->Key("driver_version").String(LabelValue(p.labels, "driver_version"));
      w->Key("cuda_version").String(LabelValue(p.labels, "cuda_version"));
    } else if (name == "vigil_gpu_driver_responsive") {
      w->Key("responsive").Bool(p.sample.value != 0);
    }
  }
  w->Key("gpus").BeginArray();
  for (const auto& p : latest) {
    if (wire::MetricName(p.labels) != "vigil_gpu_info") continue;
    w->BeginObject();
    for (const auto& l : p.labels) {
      if (l.name != wire::kMetricNameLabel) w->Key(l.name).String(l.value);
    }
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
}

void WriteCollectors(const std::vector<tsdb::LatestPoint>& latest, JsonWriter* w) {
  std::map<std::string, std::pair<double, double>> by_name;  // success, duration
  for (const auto& p : latest) {
    std::string_view name = wire::MetricName(p.labels);
    std::string collector(LabelValue(p.labels, "collector"));
    if (name == "vigil_collector_success") by_name[collector].first = p.sample.value;
    if (name == "vigil_collector_duration_seconds") by_name[collector].second = p.sample.value;
  }
  w->Key("collectors").BeginArray();
  for (const auto& [name, v] : by_name) {
    w->BeginObject().Key("name").String(name).Key("success").Bool(v.first != 0);
    w->Key("duration_seconds").Double(v.second).EndObject();
  }
  w->EndArray();
}

net::HttpResponse StatusJson(const CoreRouteDeps& deps) {
  int64_t now = deps.env->NowMillis();
  const ServerInfo& info = deps.info;
  std::vector<tsdb::LatestPoint> latest = deps.db->Latest(now - deps.staleness_ms);
  tsdb::DbStats db = deps.db->Stats();
  ingest::IngestStats in = deps.ingester->Stats();
  JsonWriter w;
  w.BeginObject();
  w.Key("version").String(info.version);
  w.Key("pid").Int(static_cast<int64_t>(::getpid()));
  w.Key("node").String(info.node);
  w.Key("home").String(info.home);
  w.Key("listen").String(info.listen);
  w.Key("started_at").String(FormatRfc3339(info.started_ms / 1000 * 1000));
  w.Key("uptime_seconds").Int((now - info.started_ms) / 1000);
  w.Key("data_bytes").Uint(deps.env->DirSize(info.data_dir).value_or(0));
  w.Key("tsdb").BeginObject();
  w.Key("series").Uint(db.series).Key("samples_appended").Uint(db.samples_appended);
  w.Key("samples_out_of_order")
      .Uint(db.samples_out_of_order)
      .Key("head_samples")
      .Uint(db.head_samples);
  w.Key("disk_bytes").Uint(db.disk_bytes);
  w.Key("min_time_ms").Int(db.min_time_ms).Key("max_time_ms").Int(db.max_time_ms);
  w.EndObject();
  w.Key("ingest").BeginObject();
  w.Key("batches").Uint(in.batches).Key("samples").Uint(in.samples);
  w.Key("duplicate_batches")
      .Uint(in.duplicate_batches)
      .Key("rejected_batches")
      .Uint(in.rejected_batches);
  w.EndObject();
  if (deps.logs != nullptr) {
    logstore::LogStoreStats ls = deps.logs->Stats();
    w.Key("logs").BeginObject();
    w.Key("streams").Uint(ls.streams).Key("lines").Uint(ls.lines);
    w.Key("duplicate_lines").Uint(ls.duplicate_lines).Key("head_lines").Uint(ls.head_lines);
    w.Key("blocks").Uint(ls.blocks).Key("disk_bytes").Uint(ls.disk_bytes);
    w.Key("batches").Uint(in.log_batches).Key("records").Uint(in.log_records);
    w.EndObject();
    w.Key("training").BeginObject();
    w.Key("samples").Uint(in.training.samples).Key("thinned").Uint(in.training.thinned);
    w.Key("dropped").Uint(in.training.names_dropped);
    w.EndObject();
  }
  WriteGpuStatus(latest, &w);
  WriteCollectors(latest, &w);
  w.EndObject();
  return net::HttpResponse::Json(200, w.Release());
}

net::HttpResponse Ingest(const CoreRouteDeps& deps, const net::HttpRequest& req) {
  Status st = deps.ingester->Receive(req.body);
  if (st.ok()) return net::HttpResponse::Text(204, "");
  int code = st.code() == StatusCode::kInvalidArgument || st.code() == StatusCode::kCorruption ||
                     st.code() == StatusCode::kFailedPrecondition
                 ? 400
             : st.code() == StatusCode::kResourceExhausted ? 413
                                                           : 503;
  return net::HttpResponse::Text(code, st.ToString() + "\n");
}

}  // namespace

void AddCoreRoutes(net::Router* router, const CoreRouteDeps& deps) {
  router->Handle("GET", "/healthz",
                 [](const net::HttpRequest&) { return net::HttpResponse::Text(200, "ok\n"); });
  auto texts = std::make_shared<SeriesTextCache>();
  router->Handle("GET", "/metrics",
                 [deps, texts](const net::HttpRequest&) { return Metrics(deps, texts.get()); });
  router->Handle("GET", "/api/v1/status",
                 [deps](const net::HttpRequest&) { return StatusJson(deps); });
  net::RouteOptions ingest_options;
  ingest_options.max_body_bytes = wire::kMaxPayloadBytes + 64;
  router->Handle(
      "POST", "/api/v1/ingest", [deps](const net::HttpRequest& req) { return Ingest(deps, req); },
      ingest_options);
}

}  // namespace vigil::api

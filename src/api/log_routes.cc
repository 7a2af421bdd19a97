#include "api/log_routes.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "api/params.h"
#include "core/json_writer.h"
#include "core/strings.h"
#include "query/logql.h"

namespace vigil::api {
namespace {

constexpr int64_t kNsPerMs = 1'000'000;
constexpr int64_t kDefaultWindowNs = 3600LL * 1'000'000'000;  // 1 h

// Times for the log API: everything ParseTime accepts, plus integer
// nanoseconds (16 digits or more), which is what Loki clients send.
Result<int64_t> LogTimeNs(const Params& p, std::string_view key, int64_t fallback_ns) {
  auto v = Param(p, key);
  if (!v.has_value() || v->empty()) return fallback_ns;
  if (v->size() >= 16 && v->find_first_not_of("0123456789") == std::string::npos) {
    int64_t ns = 0;
    auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), ns);
    if (ec == std::errc() && ptr == v->data() + v->size()) return ns;
  }
  auto ms = ParseTime(*v);
  if (!ms.ok()) {
    return InvalidArgument("invalid parameter \"" + std::string(key) +
                           "\": " + ms.status().message());
  }
  // Prometheus' "all time" bounds and anything nanoseconds cannot hold.
  if (*ms <= 0) return int64_t{0};
  if (*ms >= INT64_MAX / kNsPerMs) return INT64_MAX;
  return *ms * kNsPerMs;
}

Result<uint64_t> UintParam(const Params& p, std::string_view key, uint64_t fallback) {
  auto v = Param(p, key);
  if (!v.has_value() || v->empty()) return fallback;
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
  if (ec != std::errc() || ptr != v->data() + v->size()) {
    return InvalidArgument("invalid parameter \"" + std::string(key) + "\": not a number: " + *v);
  }
  return n;
}

void WriteLabels(const wire::Labels& labels, JsonWriter* w) {
  w->BeginObject();
  for (const auto& l : labels) w->Key(l.name).String(l.value);
  w->EndObject();
}

void WriteFlags(uint8_t flags, JsonWriter* w) {
  if (flags & wire::kLogFlagTruncated) w->Key("truncated").Bool(true);
  if (flags & wire::kLogFlagPartial) w->Key("partial").Bool(true);
  if (flags & wire::kLogFlagInvalidUtf8) w->Key("converted").Bool(true);
}

// {"stream":"7","line":12,"seq":"..","ts":"<ns>","level":"error","text":"..."}
// Stream labels go once per stream in a separate map, not on every entry.
void WriteEntry(const logstore::LogEntry& e, JsonWriter* w) {
  w->BeginObject();
  w->Key("stream").String(std::to_string(e.ref.stream_id));
  w->Key("line").Uint(e.ref.line_no);
  w->Key("seq").String(std::to_string(e.seq));
  w->Key("ts").String(std::to_string(e.time_ns));
  w->Key("level").String(wire::LogLevelName(e.level));
  WriteFlags(e.flags, w);
  w->Key("text").String(e.line);
  w->EndObject();
}

void WriteStreams(const std::vector<logstore::LogEntry>& entries, JsonWriter* w) {
  std::map<uint64_t, const wire::Labels*> streams;
  for (const auto& e : entries) {
    if (e.labels) streams.emplace(e.ref.stream_id, e.labels.get());
  }
  w->Key("streams").BeginObject();
  for (const auto& [id, labels] : streams) {
    w->Key(std::to_string(id));
    WriteLabels(*labels, w);
  }
  w->EndObject();
}

std::string EntriesJson(const std::vector<logstore::LogEntry>& entries,
                        const logstore::QueryResult* result) {
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  WriteStreams(entries, &w);
  w.Key("entries").BeginArray();
  for (const auto& e : entries) WriteEntry(e, &w);
  w.EndArray();
  if (result != nullptr) {
    w.Key("truncated").Bool(result->truncated);
    w.Key("stats").BeginObject();
    w.Key("blocks_scanned").Uint(result->blocks_scanned);
    w.Key("blocks_skipped").Uint(result->blocks_skipped);
    w.EndObject();
  }
  w.EndObject().EndObject();
  return w.Release();
}

class LogApi {
 public:
  LogApi(logstore::LogStore* store, LogRouteOptions opts) : store_(store), opts_(opts) {}

  // The query and time range every search-like endpoint shares.
  Result<logstore::LogQuery> QueryFrom(const Params& p, bool require_query) const {
    auto text = Param(p, "query");
    if (require_query && (!text.has_value() || text->empty())) {
      return InvalidArgument("invalid parameter \"query\": no query given");
    }
    logstore::LogQuery q;
    if (text.has_value() && !text->empty()) {
      VIGIL_ASSIGN_OR_RETURN(q, query::ParseLogQuery(*text));
    }
    int64_t now_ns = opts_.env->NowMillis() * kNsPerMs;
    VIGIL_ASSIGN_OR_RETURN(q.end_ns, LogTimeNs(p, "end", now_ns + 1));
    VIGIL_ASSIGN_OR_RETURN(q.start_ns, LogTimeNs(p, "start", q.end_ns - kDefaultWindowNs));
    if (q.end_ns < q.start_ns) {
      return InvalidArgument("invalid parameter \"end\": end timestamp must not be before start");
    }
    VIGIL_ASSIGN_OR_RETURN(uint64_t limit, UintParam(p, "limit", opts_.default_limit));
    q.limit = static_cast<size_t>(std::clamp<uint64_t>(limit, 1, opts_.max_limit));
    auto dir = Param(p, "direction");
    if (dir.has_value() && !dir->empty()) {
      if (*dir != "forward" && *dir != "backward") {
        return InvalidArgument("invalid parameter \"direction\": use forward or backward");
      }
      q.forward = *dir == "forward";
    }
    // cursor=<ts>-<seq> of the last entry a client got: the page after it.
    if (auto cursor = Param(p, "cursor"); cursor.has_value() && !cursor->empty()) {
      size_t dash = cursor->find('-');
      auto ts = ParseInt64(cursor->substr(0, dash));
      auto seq = dash == std::string::npos ? std::nullopt : ParseInt64(cursor->substr(dash + 1));
      if (!ts || !seq || *seq < 0) {
        return InvalidArgument("invalid parameter \"cursor\": use <ts>-<seq> of an entry");
      }
      q.after = std::make_pair(*ts, static_cast<uint64_t>(*seq));
    }
    return q;
  }

  net::HttpResponse Query(const net::HttpRequest& req) const {
    auto p = GetParams(req);
    if (!p.ok()) return FromStatus(p.status());
    auto q = QueryFrom(*p, /*require_query=*/true);
    if (!q.ok()) return FromStatus(q.status());
    auto r = store_->Query(*q);
    if (!r.ok()) return FromStatus(r.status());
    return net::HttpResponse::Json(200, EntriesJson(r->entries, &*r));
  }

  net::HttpResponse Context(const net::HttpRequest& req) const {
    auto p = GetParams(req);
    if (!p.ok()) return FromStatus(p.status());
    auto stream = UintParam(*p, "stream", UINT64_MAX);
    auto line = UintParam(*p, "line", UINT64_MAX);
    auto before = UintParam(*p, "before", 10);
    auto after = UintParam(*p, "after", 10);
    for (const auto* r : {&stream, &line, &before, &after}) {
      if (!r->ok()) return FromStatus(r->status());
    }
    if (*stream == UINT64_MAX || *line == UINT64_MAX) {
      return Error(400, "bad_data", "invalid parameters: \"stream\" and \"line\" are required");
    }
    auto r = store_->Context({*stream, *line}, std::min<uint64_t>(*before, opts_.max_context),
                             std::min<uint64_t>(*after, opts_.max_context));
    if (!r.ok()) return FromStatus(r.status());
    return net::HttpResponse::Json(200, EntriesJson(*r, nullptr));
  }

  // Server-sent events: what is new after the cursor, then the response ends
  // and EventSource comes back after `retry` ms with Last-Event-ID. Without a
  // cursor the answer only establishes one (the newest sequence number).
  net::HttpResponse Tail(const net::HttpRequest& req) const {
    auto p = GetParams(req);
    if (!p.ok()) return FromStatus(p.status());
    auto q = QueryFrom(*p, /*require_query=*/false);
    if (!q.ok()) return FromStatus(q.status());
    std::string cursor = Param(*p, "after").value_or("");
    if (cursor.empty()) cursor = std::string(req.Header("Last-Event-ID").value_or(""));
    std::string body = "retry: " + std::to_string(opts_.tail_retry_ms) + "\n\n";
    uint64_t after = 0;
    if (cursor.empty()) {
      body += "id: " + std::to_string(store_->LastSeq()) + "\nevent: cursor\ndata: {}\n\n";
    } else {
      auto [ptr, ec] = std::from_chars(cursor.data(), cursor.data() + cursor.size(), after);
      if (ec != std::errc() || ptr != cursor.data() + cursor.size()) {
        return Error(400, "bad_data", "invalid tail cursor \"" + cursor + "\"");
      }
      auto r = store_->Since(*q, after);
      if (!r.ok()) return FromStatus(r.status());
      for (const auto& e : *r) {
        JsonWriter w;
        w.BeginObject().Key("labels");
        if (e.labels) {
          WriteLabels(*e.labels, &w);
        } else {
          w.BeginObject().EndObject();
        }
        w.Key("entry");
        WriteEntry(e, &w);
        w.EndObject();
        body += "id: " + std::to_string(e.seq) + "\nevent: entry\ndata: " + w.str() + "\n\n";
      }
    }
    net::HttpResponse resp;
    resp.content_type = "text/event-stream; charset=utf-8";
    resp.headers.Set("Cache-Control", "no-store");
    resp.body = std::move(body);
    return resp;
  }

  net::HttpResponse Histogram(const net::HttpRequest& req) const {
    auto p = GetParams(req);
    if (!p.ok()) return FromStatus(p.status());
    auto q = QueryFrom(*p, /*require_query=*/false);
    if (!q.ok()) return FromStatus(q.status());
    int64_t step_ns = std::max<int64_t>((q->end_ns - q->start_ns) / 60, 1'000'000'000);
    if (auto s = Param(*p, "step"); s.has_value() && !s->empty()) {
      auto ms = ParseDurationParam(*s);
      if (!ms.ok() || *ms <= 0) return Error(400, "bad_data", "invalid parameter \"step\"");
      step_ns = *ms * kNsPerMs;
    }
    if ((q->end_ns - q->start_ns) / step_ns > 11'000) {
      return Error(400, "bad_data",
                   "exceeded maximum resolution of 11,000 points per histogram; use a larger step");
    }
    auto h = store_->Histogram(*q, step_ns);
    if (!h.ok()) return FromStatus(h.status());
    JsonWriter w;
    w.BeginObject().Key("status").String("success").Key("data").BeginObject();
    w.Key("start").String(std::to_string(h->start_ns));
    w.Key("step").String(std::to_string(h->step_ns));
    w.Key("levels").BeginArray();
    for (int i = 0; i < wire::kLogLevelCount; ++i) {
      w.String(wire::LogLevelName(static_cast<wire::LogLevel>(i)));
    }
    w.EndArray();
    w.Key("buckets").BeginArray();
    for (const auto& b : h->buckets) {
      w.BeginArray();
      for (uint64_t n : b) w.Uint(n);
      w.EndArray();
    }
    w.EndArray().EndObject().EndObject();
    return net::HttpResponse::Json(200, w.Release());
  }

  net::HttpResponse Strings(const std::vector<std::string>& values) const {
    JsonWriter w;
    w.BeginObject().Key("status").String("success").Key("data").BeginArray();
    for (const auto& v : values) w.String(v);
    w.EndArray().EndObject();
    return net::HttpResponse::Json(200, w.Release());
  }

  net::HttpResponse Labels(const net::HttpRequest& req) const {
    auto p = GetParams(req);
    if (!p.ok()) return FromStatus(p.status());
    auto q = QueryFrom(*p, false);
    if (!q.ok()) return FromStatus(q.status());
    return Strings(store_->LabelNames(q->start_ns, q->end_ns));
  }

  net::HttpResponse LabelValues(const net::HttpRequest& req) const {
    constexpr std::string_view kPrefix = "/api/v1/logs/label/";
    constexpr std::string_view kSuffix = "/values";
    std::string_view path = req.path;
    if (path.size() <= kPrefix.size() + kSuffix.size() || !path.ends_with(kSuffix)) {
      return Error(404, "bad_data", "not found: use /api/v1/logs/label/<name>/values");
    }
    std::string name(path.substr(kPrefix.size(), path.size() - kPrefix.size() - kSuffix.size()));
    auto p = GetParams(req);
    if (!p.ok()) return FromStatus(p.status());
    auto q = QueryFrom(*p, false);
    if (!q.ok()) return FromStatus(q.status());
    return Strings(store_->LabelValues(name, q->start_ns, q->end_ns));
  }

  net::HttpResponse Sources() const {
    JsonWriter w;
    w.BeginObject().Key("status").String("success").Key("data").BeginArray();
    for (const auto& s : store_->Sources()) {
      w.BeginObject().Key("labels");
      WriteLabels(s.labels, &w);
      w.Key("lines").Uint(s.lines).Key("bytes").Uint(s.bytes);
      w.Key("sampled_lines").Uint(s.counters.sampled_lines);
      w.Key("filtered_lines").Uint(s.counters.filtered_lines);
      w.Key("truncated_lines").Uint(s.counters.truncated_lines);
      w.Key("lost_bytes").Uint(s.counters.lost_bytes);
      w.EndObject();
    }
    w.EndArray().EndObject();
    return net::HttpResponse::Json(200, w.Release());
  }

 private:
  logstore::LogStore* store_;
  LogRouteOptions opts_;
};

}  // namespace

void AddLogRoutes(net::Router* router, logstore::LogStore* store, LogRouteOptions options) {
  auto api = std::make_shared<const LogApi>(store, options);
  auto query = [api](const net::HttpRequest& r) { return api->Query(r); };
  router->Handle("GET", "/api/v1/logs/query", query);
  router->Handle("POST", "/api/v1/logs/query", query);
  router->Handle("GET", "/api/v1/logs/context",
                 [api](const net::HttpRequest& r) { return api->Context(r); });
  router->Handle("GET", "/api/v1/logs/tail",
                 [api](const net::HttpRequest& r) { return api->Tail(r); });
  router->Handle("GET", "/api/v1/logs/histogram",
                 [api](const net::HttpRequest& r) { return api->Histogram(r); });
  router->Handle("GET", "/api/v1/logs/labels",
                 [api](const net::HttpRequest& r) { return api->Labels(r); });
  router->HandlePrefix("GET", "/api/v1/logs/label/",
                       [api](const net::HttpRequest& r) { return api->LabelValues(r); });
  router->Handle("GET", "/api/v1/logs/sources",
                 [api](const net::HttpRequest&) { return api->Sources(); });
}

}  // namespace vigil::api

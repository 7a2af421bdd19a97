#include "api/query_routes.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <set>

#include "core/json_writer.h"
#include "query/parser.h"

namespace vigil::api {
namespace {

using query::QueryResult;
using query::ValueType;

// Defaults of start/end for series and labels: all time (ms, far from overflow).
constexpr int64_t kMinTime = -9'000'000'000'000'000LL;
constexpr int64_t kMaxTime = 9'000'000'000'000'000LL;

// Query-string parameters plus, for POST, form-encoded body parameters.
using Params = std::vector<std::pair<std::string, std::string>>;

Result<Params> GetParams(const HttpRequest& req) {
  Params p = req.query;
  if (req.method == "POST") {
    auto ct = req.Header("Content-Type");
    if (ct.has_value() && ct->find("application/x-www-form-urlencoded") != std::string_view::npos) {
      Status st = ParseQueryString(req.body, &p);
      if (!st.ok()) return InvalidArgument("cannot parse form body: " + st.message());
    }
  }
  return p;
}

std::optional<std::string> Param(const Params& p, std::string_view key) {
  for (const auto& [k, v] : p) {
    if (k == key) return v;
  }
  return std::nullopt;
}

std::vector<std::string> ParamAll(const Params& p, std::string_view key) {
  std::vector<std::string> out;
  for (const auto& [k, v] : p) {
    if (k == key) out.push_back(v);
  }
  return out;
}

HttpResponse Error(int status, std::string_view type, std::string_view msg) {
  std::string body = "{\"status\":\"error\",\"errorType\":";
  AppendJsonString(&body, type);
  body += ",\"error\":";
  AppendJsonString(&body, msg);
  body += "}";
  return HttpResponse::Json(status, std::move(body));
}

HttpResponse FromStatus(const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kUnimplemented:
      return Error(400, "bad_data", st.message());
    case StatusCode::kDeadlineExceeded:
      return Error(503, "timeout", st.message());
    case StatusCode::kFailedPrecondition:
    case StatusCode::kResourceExhausted:
      return Error(422, "execution", st.message());
    default:
      return Error(500, "internal", st.message());
  }
}

// Unix seconds ("1435781451.781") or RFC3339 ("2015-07-01T20:10:51.781Z").
Result<int64_t> ParseTime(std::string_view s) {
  std::string str(s);
  char* end = nullptr;
  double secs = std::strtod(str.c_str(), &end);
  if (!str.empty() && end != nullptr && *end == '\0' && std::isfinite(secs)) {
    return static_cast<int64_t>(std::llround(secs * 1000));
  }
  // Clients send Prometheus' own "all time" bounds, years like -292273086 and
  // 292277025, which no struct tm holds.
  size_t dash = str.find('-', 1);
  if (dash != std::string::npos && dash >= 6 && str.find('T') != std::string::npos) {
    return str[0] == '-' ? kMinTime : kMaxTime;
  }
  struct tm tm {};
  const char* rest = strptime(str.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (rest != nullptr) {
    int64_t ms = static_cast<int64_t>(timegm(&tm)) * 1000;
    if (*rest == '.') {
      ++rest;
      int64_t frac = 0, digits = 0;
      while (*rest >= '0' && *rest <= '9') {
        if (digits < 3) frac = frac * 10 + (*rest - '0'), ++digits;
        ++rest;
      }
      while (digits < 3) frac *= 10, ++digits;
      ms += frac;
    }
    if ((*rest == 'Z' || *rest == 'z') && rest[1] == '\0') return ms;
    if ((*rest == '+' || *rest == '-') && std::strlen(rest) == 6 && rest[3] == ':') {
      int64_t off =
          (std::atoi(std::string(rest + 1, 2).c_str()) * 60 + std::atoi(rest + 4)) * 60'000;
      return *rest == '+' ? ms - off : ms + off;
    }
  }
  return InvalidArgument("cannot parse \"" + str + "\" to a valid timestamp");
}

Result<int64_t> TimeParam(const Params& p, std::string_view key, int64_t fallback) {
  auto v = Param(p, key);
  if (!v.has_value() || v->empty()) return fallback;
  auto t = ParseTime(*v);
  if (!t.ok())
    return InvalidArgument("invalid parameter \"" + std::string(key) +
                           "\": " + t.status().message());
  return t;
}

// Float seconds ("15", "0.5") or a Prometheus duration ("15s", "1m").
Result<int64_t> ParseDurationParam(std::string_view s) {
  std::string str(s);
  char* end = nullptr;
  double secs = std::strtod(str.c_str(), &end);
  if (!str.empty() && end != nullptr && *end == '\0') {
    if (!std::isfinite(secs) || std::fabs(secs) > 9e15) {
      return InvalidArgument("cannot parse \"" + str +
                             "\" to a valid duration. It overflows int64");
    }
    return static_cast<int64_t>(std::llround(secs * 1000));
  }
  auto d = query::ParseDurationMs(s);
  if (!d.ok()) return InvalidArgument("cannot parse \"" + str + "\" to a valid duration");
  return d;
}

void AppendPoint(std::string* out, int64_t t, std::string_view v) {
  *out += "[" + query::FormatTimestamp(t) + ",";
  AppendJsonString(out, v);
  *out += "]";
}

void AppendLabels(std::string* out, const wire::Labels& labels) {
  *out += "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) *out += ",";
    AppendJsonString(out, labels[i].name);
    *out += ":";
    AppendJsonString(out, labels[i].value);
  }
  *out += "}";
}

std::string ResultJson(const QueryResult& r) {
  std::string out = "{\"status\":\"success\",\"data\":{\"resultType\":\"";
  out += query::ValueTypeName(r.type);
  out += "\",\"result\":";
  if (r.type == ValueType::kScalar || r.type == ValueType::kString) {
    const query::Point& p = r.series[0].points[0];
    AppendPoint(&out, p.t_ms, r.type == ValueType::kString ? r.str : query::FormatValue(p.v));
    return out + "}}";
  }
  out += "[";
  for (size_t i = 0; i < r.series.size(); ++i) {
    const auto& s = r.series[i];
    if (i) out += ",";
    out += "{\"metric\":";
    AppendLabels(&out, s.labels);
    if (r.type == ValueType::kVector) {
      out += ",\"value\":";
      AppendPoint(&out, s.points[0].t_ms, query::FormatValue(s.points[0].v));
    } else {
      out += ",\"values\":[";
      for (size_t j = 0; j < s.points.size(); ++j) {
        if (j) out += ",";
        AppendPoint(&out, s.points[j].t_ms, query::FormatValue(s.points[j].v));
      }
      out += "]";
    }
    out += "}";
  }
  return out + "]}}";
}

class QueryApi {
 public:
  QueryApi(tsdb::Db* db, query::EngineOptions opts) : db_(db), opts_(opts) {}

  HttpResponse Query(const HttpRequest& req) const {
    auto p = GetParams(req);
    if (!p.ok()) return FromStatus(p.status());
    auto q = Param(*p, "query");
    if (!q.has_value() || q->empty())
      return Error(400, "bad_data", "invalid parameter \"query\": no query given");
    auto t = TimeParam(*p, "time", opts_.env->NowMillis());
    if (!t.ok()) return FromStatus(t.status());
    auto engine = EngineFor(*p);
    if (!engine.ok()) return FromStatus(engine.status());
    auto r = (*engine)->Instant(*q, *t);
    if (!r.ok()) return FromStatus(r.status());
    return HttpResponse::Json(200, ResultJson(*r));
  }

  HttpResponse QueryRange(const HttpRequest& req) const {
    auto p = GetParams(req);
    if (!p.ok()) return FromStatus(p.status());
    auto q = Param(*p, "query");
    if (!q.has_value() || q->empty())
      return Error(400, "bad_data", "invalid parameter \"query\": no query given");
    for (const char* k : {"start", "end", "step"}) {
      if (!Param(*p, k).has_value()) {
        return Error(400, "bad_data", std::string("invalid parameter \"") + k + "\": missing");
      }
    }
    auto start = TimeParam(*p, "start", 0);
    if (!start.ok()) return FromStatus(start.status());
    auto end = TimeParam(*p, "end", 0);
    if (!end.ok()) return FromStatus(end.status());
    auto step = ParseDurationParam(*Param(*p, "step"));
    if (!step.ok())
      return Error(400, "bad_data", "invalid parameter \"step\": " + step.status().message());
    auto engine = EngineFor(*p);
    if (!engine.ok()) return FromStatus(engine.status());
    auto r = (*engine)->Range(*q, *start, *end, *step);
    if (!r.ok()) return FromStatus(r.status());
    return HttpResponse::Json(200, ResultJson(*r));
  }

  // Series matching any match[] selector (all series when none is given and
  // `require_match` is false).
  Result<std::vector<wire::Series>> MatchSeries(const Params& p, bool require_match) const {
    VIGIL_ASSIGN_OR_RETURN(int64_t start, TimeParam(p, "start", kMinTime));
    VIGIL_ASSIGN_OR_RETURN(int64_t end, TimeParam(p, "end", kMaxTime));
    std::vector<std::string> matches = ParamAll(p, "match[]");
    if (matches.empty()) {
      if (require_match) return InvalidArgument("no match[] parameter provided");
      matches.push_back("{__name__=~\".+\"}");
    }
    std::map<wire::Labels, wire::Series> merged;
    for (const auto& m : matches) {
      VIGIL_ASSIGN_OR_RETURN(query::NodePtr n, query::ParseExpr(m));
      if (n->kind != query::NodeKind::kVectorSelector) {
        return InvalidArgument("invalid parameter \"match[]\": \"" + m +
                               "\" is not a series selector");
      }
      VIGIL_ASSIGN_OR_RETURN(std::vector<wire::Series> got, db_->Select(n->matchers, start, end));
      for (auto& s : got) merged.emplace(s.labels, wire::Series{s.labels, {}});
    }
    std::vector<wire::Series> out;
    for (auto& [k, s] : merged) out.push_back(std::move(s));
    return out;
  }

  HttpResponse Series(const HttpRequest& req) const {
    auto p = GetParams(req);
    if (!p.ok()) return FromStatus(p.status());
    auto series = MatchSeries(*p, /*require_match=*/true);
    if (!series.ok()) return FromStatus(series.status());
    std::string out = "{\"status\":\"success\",\"data\":[";
    for (size_t i = 0; i < series->size(); ++i) {
      if (i) out += ",";
      AppendLabels(&out, (*series)[i].labels);
    }
    return HttpResponse::Json(200, out + "]}");
  }

  HttpResponse Labels(const HttpRequest& req) const {
    return Strings(req, [](const wire::Labels& ls, std::set<std::string>* out) {
      for (const auto& l : ls) out->insert(l.name);
    });
  }

  HttpResponse LabelValues(const HttpRequest& req) const {
    constexpr std::string_view kPrefix = "/api/v1/label/";
    std::string_view rest = std::string_view(req.path).substr(kPrefix.size());
    if (rest.size() <= 7 || rest.substr(rest.size() - 7) != "/values") {
      return Error(404, "bad_data", "not found: use /api/v1/label/<name>/values");
    }
    std::string name(rest.substr(0, rest.size() - 7));
    return Strings(req, [&name](const wire::Labels& ls, std::set<std::string>* out) {
      for (const auto& l : ls) {
        if (l.name == name) out->insert(l.value);
      }
    });
  }

 private:
  template <typename F>
  HttpResponse Strings(const HttpRequest& req, F collect) const {
    auto p = GetParams(req);
    if (!p.ok()) return FromStatus(p.status());
    auto series = MatchSeries(*p, /*require_match=*/false);
    if (!series.ok()) return FromStatus(series.status());
    std::set<std::string> names;
    for (const auto& s : *series) collect(s.labels, &names);
    std::string out = "{\"status\":\"success\",\"data\":[";
    bool first = true;
    for (const auto& n : names) {
      if (!first) out += ",";
      first = false;
      AppendJsonString(&out, n);
    }
    return HttpResponse::Json(200, out + "]}");
  }

  // The engine, or one with a shorter timeout when the request asks for it.
  Result<std::unique_ptr<query::Engine>> EngineFor(const Params& p) const {
    query::EngineOptions o = opts_;
    if (auto t = Param(p, "timeout"); t.has_value() && !t->empty()) {
      auto d = ParseDurationParam(*t);
      if (!d.ok()) return InvalidArgument("invalid parameter \"timeout\": " + d.status().message());
      o.timeout_ms = std::min(o.timeout_ms, *d);
    }
    return std::make_unique<query::Engine>(db_, o);
  }

  tsdb::Db* db_;
  query::EngineOptions opts_;
};

}  // namespace

void AddQueryRoutes(Router* router, tsdb::Db* db, const query::EngineOptions& options) {
  // shared_ptr: every route's handler (a copyable std::function) owns the API.
  auto api = std::make_shared<QueryApi>(db, options);
  for (const char* method : {"GET", "POST"}) {
    router->Handle(method, "/api/v1/query", [api](const HttpRequest& r) { return api->Query(r); });
    router->Handle(method, "/api/v1/query_range",
                   [api](const HttpRequest& r) { return api->QueryRange(r); });
    router->Handle(method, "/api/v1/series",
                   [api](const HttpRequest& r) { return api->Series(r); });
    router->Handle(method, "/api/v1/labels",
                   [api](const HttpRequest& r) { return api->Labels(r); });
    router->HandlePrefix(method, "/api/v1/label/",
                         [api](const HttpRequest& r) { return api->LabelValues(r); });
  }
}

void AddQueryRoutes(Router* router, tsdb::Db* db, Env* env) {
  query::EngineOptions o;
  o.env = env;
  AddQueryRoutes(router, db, o);
}

}  // namespace vigil::api

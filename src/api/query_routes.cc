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

#include "api/params.h"
#include "core/json_writer.h"
#include "query/parser.h"

namespace vigil::api {
namespace {

using query::QueryResult;
using query::ValueType;

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

  net::HttpResponse Query(const net::HttpRequest& req) const {
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
    return net::HttpResponse::Json(200, ResultJson(*r));
  }

  net::HttpResponse QueryRange(const net::HttpRequest& req) const {
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
    return net::HttpResponse::Json(200, ResultJson(*r));
  }

  // Series matching any match[] selector (all series when none is given and
  // `require_match` is false).
  Result<std::vector<wire::Series>> MatchSeries(const Params& p, bool require_match) const {
    VIGIL_ASSIGN_OR_RETURN(int64_t start, TimeParam(p, "start", kMinTimeMs));
    VIGIL_ASSIGN_OR_RETURN(int64_t end, TimeParam(p, "end", kMaxTimeMs));
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
      // Labels only: series and label lookups never decode samples.
      VIGIL_ASSIGN_OR_RETURN(std::vector<wire::Labels> got,
                             db_->SeriesLabels(n->matchers, start, end));
      for (auto& labels : got) merged.emplace(labels, wire::Series{labels, {}});
    }
    std::vector<wire::Series> out;
    for (auto& [k, s] : merged) out.push_back(std::move(s));
    return out;
  }

  net::HttpResponse Series(const net::HttpRequest& req) const {
    auto p = GetParams(req);
    if (!p.ok()) return FromStatus(p.status());
    auto series = MatchSeries(*p, /*require_match=*/true);
    if (!series.ok()) return FromStatus(series.status());
    std::string out = "{\"status\":\"success\",\"data\":[";
    for (size_t i = 0; i < series->size(); ++i) {
      if (i) out += ",";
      AppendLabels(&out, (*series)[i].labels);
    }
    return net::HttpResponse::Json(200, out + "]}");
  }

  net::HttpResponse Labels(const net::HttpRequest& req) const {
    return Strings(req, [](const wire::Labels& ls, std::set<std::string>* out) {
      for (const auto& l : ls) out->insert(l.name);
    });
  }

  net::HttpResponse LabelValues(const net::HttpRequest& req) const {
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
  net::HttpResponse Strings(const net::HttpRequest& req, F collect) const {
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
    return net::HttpResponse::Json(200, out + "]}");
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

void AddQueryRoutes(net::Router* router, tsdb::Db* db, const query::EngineOptions& options) {
  // shared_ptr: every route's handler (a copyable std::function) owns the API.
  auto api = std::make_shared<QueryApi>(db, options);
  for (const char* method : {"GET", "POST"}) {
    router->Handle(method, "/api/v1/query",
                   [api](const net::HttpRequest& r) { return api->Query(r); });
    router->Handle(method, "/api/v1/query_range",
                   [api](const net::HttpRequest& r) { return api->QueryRange(r); });
    router->Handle(method, "/api/v1/series",
                   [api](const net::HttpRequest& r) { return api->Series(r); });
    router->Handle(method, "/api/v1/labels",
                   [api](const net::HttpRequest& r) { return api->Labels(r); });
    router->HandlePrefix(method, "/api/v1/label/",
                         [api](const net::HttpRequest& r) { return api->LabelValues(r); });
  }
}

void AddQueryRoutes(net::Router* router, tsdb::Db* db, Env* env) {
  query::EngineOptions o;
  o.env = env;
  AddQueryRoutes(router, db, o);
}

}  // namespace vigil::api

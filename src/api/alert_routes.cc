#include "api/alert_routes.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "alert/alert_json.h"
#include "api/action_routes.h"
#include "api/delivery_routes.h"
#include "api/inbox_routes.h"
#include "api/params.h"
#include "core/json_writer.h"
#include "core/strings.h"

namespace vigil::api {
namespace {

using alert::Alert;
using alert::AlertState;

// Prometheus prints an alert's value with strconv.FormatFloat(v, 'e', -1, 64).
std::string GoExponent(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  for (int precision = 0; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*e", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  // C writes "8.5e+01" as Go does; both use at least two exponent digits.
  return buf;
}

void WritePromAlert(JsonWriter* w, const Alert& a) {
  w->BeginObject();
  w->Key("labels");
  alert::WriteLabels(w, a.labels);
  w->Key("annotations").BeginObject();
  w->Key("summary").String(a.summary_en);
  w->Key("summary_zh").String(a.summary_zh);
  w->EndObject();
  w->Key("state").String(AlertStateName(a.state));
  w->Key("activeAt").String(FormatRfc3339(a.active_at_ms));
  if (a.keep_firing_since_ms != 0)
    w->Key("keepFiringSince").String(FormatRfc3339(a.keep_firing_since_ms));
  w->Key("value").String(GoExponent(a.value));
  w->EndObject();
}

net::HttpResponse PromAlerts(const alert::AlertEngine* engine) {
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  w.Key("alerts").BeginArray();
  for (const Alert& a : engine->Active()) WritePromAlert(&w, a);
  w.EndArray().EndObject().EndObject();
  return JsonOk(w.Release());
}

// One level of a rule as a Prometheus alerting rule.
void WritePromRule(JsonWriter* w, const alert::RuleStatus& rs, const alert::Level& level,
                   const std::vector<Alert>& active) {
  const alert::Rule& r = rs.rule;
  std::string state = "inactive";
  w->BeginObject();
  w->Key("name").String(r.id);
  w->Key("query").String(alert::LevelCondition(r, level));
  w->Key("duration").Double(static_cast<double>(level.for_ms) / 1000.0);
  w->Key("keepFiringFor").Double(static_cast<double>(r.keep_firing_for_ms) / 1000.0);
  w->Key("labels").BeginObject().Key("severity").String(SeverityName(level.severity)).EndObject();
  w->Key("annotations").BeginObject();
  w->Key("summary").String(r.summary_en).Key("summary_zh").String(r.summary_zh);
  w->EndObject();
  w->Key("alerts").BeginArray();
  for (const Alert& a : active) {
    if (a.rule != r.id || a.severity != level.severity) continue;
    WritePromAlert(w, a);
    if (a.state == AlertState::kFiring)
      state = "firing";
    else if (state == "inactive")
      state = "pending";
  }
  w->EndArray();
  w->Key("state").String(r.enabled ? state : "inactive");
  w->Key("health").String(rs.health);
  if (!rs.last_error.empty()) w->Key("lastError").String(rs.last_error);
  w->Key("evaluationTime").Double(rs.eval_seconds);
  w->Key("lastEvaluation")
      .String(rs.last_eval_ms != 0 ? FormatRfc3339(rs.last_eval_ms) : "0001-01-01T00:00:00Z");
  w->Key("type").String("alerting");
  // Vigil's own: what `vigil rules ls` prints.
  w->Key("vigil").BeginObject();
  w->Key("enabled").Bool(r.enabled);
  w->Key("comparison").String(alert::ComparisonText(r.comparison));
  w->Key("threshold").Double(level.fire);
  w->Key("clear").Double(level.clear);
  w->Key("relative_to").String(r.reference);
  w->Key("unit").String(r.unit);
  // Where a threshold differs per GPU: each one's, as the engine saw it.
  w->Key("per_series").BeginArray();
  for (const alert::SeriesThreshold& t : rs.thresholds) {
    if (t.severity != level.severity) continue;
    w->BeginObject().Key("where").String(t.where).Key("threshold").Double(t.threshold).EndObject();
  }
  w->EndArray();
  // config.json's overrides of this level for some nodes, jobs or models.
  w->Key("overrides").BeginArray();
  for (const alert::ScopedOverride& o : r.overrides) {
    std::optional<double> fire =
        level.severity == alert::Severity::kCritical ? o.set.critical : o.set.warning;
    if (!o.set.enabled && !o.set.for_ms && !fire) continue;
    w->BeginObject();
    if (!o.scope.node.empty()) w->Key("node").String(o.scope.node);
    if (!o.scope.job.empty()) w->Key("job").String(o.scope.job);
    if (!o.scope.gpu_model.empty()) w->Key("gpu_model").String(o.scope.gpu_model);
    if (o.set.enabled) w->Key("enabled").Bool(*o.set.enabled);
    if (o.set.for_ms) w->Key("for").String(alert::FormatDuration(*o.set.for_ms));
    if (fire) w->Key("threshold").Double(*fire);
    w->EndObject();
  }
  w->EndArray();
  w->EndObject();
  w->EndObject();
}

net::HttpResponse PromRules(const alert::AlertEngine* engine) {
  std::vector<Alert> active = engine->Active();
  std::vector<alert::RuleStatus> rules = engine->Rules();
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  w.Key("groups").BeginArray().BeginObject();
  w.Key("name").String("vigil-presets");
  w.Key("file").String("presets");
  w.Key("interval").Double(static_cast<double>(engine->config().eval_interval_ms) / 1000.0);
  w.Key("limit").Int(0);
  w.Key("rules").BeginArray();
  for (const alert::RuleStatus& rs : rules) {
    for (const alert::Level& level : rs.rule.levels) WritePromRule(&w, rs, level, active);
  }
  w.EndArray().EndObject().EndArray().EndObject().EndObject();
  return JsonOk(w.Release());
}

net::HttpResponse Records(const alert::AlertEngine* engine, const net::HttpRequest& req) {
  auto params = GetParams(req);
  if (!params.ok()) return FromStatus(params.status());
  bool all =
      Param(*params, "all").value_or("") == "1" || Param(*params, "all").value_or("") == "true";
  size_t limit = 500;
  if (auto l = Param(*params, "limit")) {
    auto n = ParseUint64(*l);
    if (!n || *n == 0 || *n > 10'000)
      return Error(400, "bad_data", "limit must be from 1 to 10000");
    limit = static_cast<size_t>(*n);
  }
  std::set<std::string> inhibited, silenced;
  std::vector<Alert> alerts = engine->Active(&inhibited, &silenced);
  if (all) {
    auto history = engine->History(limit);
    if (!history.ok()) return FromStatus(history.status());
    alerts.insert(alerts.end(), history->begin(), history->end());
  }
  JsonWriter w;
  w.BeginArray();
  for (const Alert& a : alerts) {
    // Resolved history rows share ids with active ones: only the active are muted.
    bool active = a.state != AlertState::kResolved;
    alert::WriteAlert(&w, a, active && inhibited.count(a.id) != 0,
                      active && silenced.count(a.id) != 0);
  }
  w.EndArray();
  return JsonOk(w.Release());
}

net::HttpResponse ListSilences(const alert::AlertEngine* engine) {
  int64_t now = engine->NowMillis();
  JsonWriter w;
  w.BeginArray();
  for (const alert::Silence& s : engine->Silences()) alert::WriteSilence(&w, s, now);
  w.EndArray();
  return JsonOk(w.Release());
}

net::HttpResponse PostSilence(alert::AlertEngine* engine, const net::HttpRequest& req) {
  if (auto refused = RefuseCrossSite(req, "change silences")) return *refused;
  auto silence = ParsePostableSilence(req.body, engine->NowMillis());
  if (!silence.ok()) return FromStatus(silence.status());
  auto id = engine->AddSilence(std::move(silence).value());
  if (!id.ok()) return FromStatus(id.status());
  JsonWriter w;
  w.BeginObject().Key("silenceID").String(*id).EndObject();
  return JsonOk(w.Release());
}

// The id in /api/v1/silence/<id>, or "" when there is none.
std::string SilenceIdOf(const net::HttpRequest& req) {
  constexpr std::string_view kPrefix = "/api/v1/silence/";
  std::string_view path = req.path;
  if (!StartsWith(path, kPrefix)) return "";
  std::string_view id = path.substr(kPrefix.size());
  return id.find('/') == std::string_view::npos ? std::string(id) : "";
}

net::HttpResponse NoSuchSilence(const std::string& id) {
  return Error(404, "not_found",
               "no silence has the id \"" + std::string(CutUtf8(id, 64)) +
                   "\" (GET /api/v1/silences lists them)");
}

net::HttpResponse OneSilence(alert::AlertEngine* engine, const net::HttpRequest& req) {
  std::string id = SilenceIdOf(req);
  int64_t now = engine->NowMillis();
  if (req.method == "DELETE") {
    if (auto refused = RefuseCrossSite(req, "change silences")) return *refused;
    auto s = engine->ExpireSilence(id);
    if (s.status().code() == StatusCode::kNotFound) return NoSuchSilence(id);
    if (!s.ok()) return FromStatus(s.status());
    JsonWriter w;
    alert::WriteSilence(&w, *s, now);
    return JsonOk(w.Release());
  }
  for (const alert::Silence& s : engine->Silences()) {
    if (s.id != id) continue;
    JsonWriter w;
    alert::WriteSilence(&w, s, now);
    return JsonOk(w.Release());
  }
  return NoSuchSilence(id);
}

}  // namespace

Result<alert::Silence> ParsePostableSilence(std::string_view body, int64_t now_ms) {
  using nlohmann::json;
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return InvalidArgument(
        R"(the body must be a JSON object such as {"matchers": [{"name": "node", "value": "n1", )"
        R"("isRegex": false, "isEqual": true}], "duration": "2h", "comment": "..."})");
  }
  alert::Silence s;
  s.starts_at_ms = now_ms;
  std::optional<int64_t> ends, duration;
  auto text = [&](const std::string& key, const json& v) -> Result<std::string> {
    if (!v.is_string()) return InvalidArgument(key + " must be a string");
    return v.get<std::string>();
  };
  auto time = [&](const std::string& key, const json& v) -> Result<int64_t> {
    VIGIL_ASSIGN_OR_RETURN(std::string t, text(key, v));
    auto ms = ParseTime(t);
    if (!ms.ok())
      return InvalidArgument(key +
                             " must be an RFC 3339 time such as "
                             "\"2026-12-02T02:05:39Z\", not \"" +
                             std::string(CutUtf8(t, 64)) + "\"");
    return ms;
  };
  for (const auto& [key, v] : j.items()) {
    if (key == "matchers") {
      if (!v.is_array()) return InvalidArgument("matchers must be a list");
      if (v.size() > alert::kMaxSilenceMatchers) {
        return InvalidArgument("a silence has at most " +
                               std::to_string(alert::kMaxSilenceMatchers) + " matchers, not " +
                               std::to_string(v.size()));
      }
      for (size_t i = 0; i < v.size(); ++i) {
        std::string at = "matchers[" + std::to_string(i) + "]";
        const json& m = v[i];
        if (!m.is_object()) return InvalidArgument(at + " must be an object");
        alert::Matcher x;
        bool regex = false, equal = true, named = false, valued = false;
        for (const auto& [mk, mv] : m.items()) {
          if (mk == "name") {
            VIGIL_ASSIGN_OR_RETURN(x.name, text(at + ".name", mv));
            named = true;
          } else if (mk == "value") {
            VIGIL_ASSIGN_OR_RETURN(x.value, text(at + ".value", mv));
            valued = true;
          } else if (mk == "isRegex" || mk == "isEqual") {
            if (!mv.is_boolean()) return InvalidArgument(at + "." + mk + " must be true or false");
            (mk == "isRegex" ? regex : equal) = mv.get<bool>();
          } else {
            return InvalidArgument("unknown key " + at + "." + mk);
          }
        }
        if (!named || !valued) return InvalidArgument(at + " needs a name and a value");
        x.op = regex ? (equal ? alert::MatchOp::kRegex : alert::MatchOp::kNotRegex)
                     : (equal ? alert::MatchOp::kEqual : alert::MatchOp::kNotEqual);
        Status st = alert::ValidateMatcher(x);
        if (!st.ok()) return st.WithContext(at);
        s.matchers.push_back(std::move(x));
      }
    } else if (key == "startsAt") {
      VIGIL_ASSIGN_OR_RETURN(s.starts_at_ms, time("startsAt", v));
    } else if (key == "endsAt") {
      VIGIL_ASSIGN_OR_RETURN(ends, time("endsAt", v));
    } else if (key == "duration") {
      VIGIL_ASSIGN_OR_RETURN(std::string d, text("duration", v));
      auto ms = alert::ParseSilenceDuration(d);
      if (!ms.ok()) return ms.status().WithContext("duration");
      duration = *ms;
    } else if (key == "createdBy") {
      VIGIL_ASSIGN_OR_RETURN(s.created_by, text("createdBy", v));
    } else if (key == "comment") {
      VIGIL_ASSIGN_OR_RETURN(s.comment, text("comment", v));
    } else if (key == "id") {
      // Alertmanager updates the silence an id names; Vigil adds only.
      if (!v.is_null() && !(v.is_string() && v.get<std::string>().empty())) {
        return InvalidArgument(
            "changing a silence is not supported: expire it (DELETE /api/v1/silence/<id>) and "
            "add a new one");
      }
    } else {
      return InvalidArgument("unknown key \"" + std::string(CutUtf8(key, 64)) +
                             "\" (a silence has matchers, startsAt, endsAt or duration, "
                             "createdBy, comment)");
    }
  }
  if (s.matchers.empty()) return InvalidArgument("a silence needs at least one matcher");
  if (ends && duration) return InvalidArgument("give endsAt or duration, not both");
  if (!ends && !duration) return InvalidArgument("a silence needs endsAt or duration");
  // A start in the past is now (Alertmanager's rule too).
  s.starts_at_ms = std::max(s.starts_at_ms, now_ms);
  if (duration) {
    s.ends_at_ms = s.starts_at_ms + *duration;
  } else {
    if (*ends <= now_ms) return InvalidArgument("endsAt must be in the future");
    s.ends_at_ms = *ends;
  }
  s.created_at_ms = s.updated_at_ms = now_ms;
  VIGIL_RETURN_IF_ERROR(alert::ValidateSilence(s));
  return s;
}

void AddAlertRoutes(net::Router* router, alert::AlertEngine* engine) {
  router->Handle("GET", "/api/v1/alerts",
                 [engine](const net::HttpRequest&) { return PromAlerts(engine); });
  router->Handle("GET", "/api/v1/rules",
                 [engine](const net::HttpRequest&) { return PromRules(engine); });
  router->Handle("GET", "/api/v1/alerts/records",
                 [engine](const net::HttpRequest& req) { return Records(engine, req); });
  router->Handle("GET", "/api/v1/silences",
                 [engine](const net::HttpRequest&) { return ListSilences(engine); });
  router->Handle("POST", "/api/v1/silences",
                 [engine](const net::HttpRequest& req) { return PostSilence(engine, req); });
  for (const char* method : {"GET", "DELETE"}) {
    router->HandlePrefix(method, "/api/v1/silence/",
                         [engine](const net::HttpRequest& req) { return OneSilence(engine, req); });
  }
  AddDeliveryRoutes(router, engine);
  AddInboxRoutes(router, engine);
  AddActionRoutes(router, engine);
}

}  // namespace vigil::api

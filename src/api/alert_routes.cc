#include "api/alert_routes.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "alert/alert_json.h"
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
  std::set<std::string> inhibited;
  std::vector<Alert> alerts = engine->Active(&inhibited);
  if (all) {
    auto history = engine->History(limit);
    if (!history.ok()) return FromStatus(history.status());
    alerts.insert(alerts.end(), history->begin(), history->end());
  }
  JsonWriter w;
  w.BeginArray();
  for (const Alert& a : alerts) alert::WriteAlert(&w, a, inhibited.count(a.id) != 0);
  w.EndArray();
  return JsonOk(w.Release());
}

}  // namespace

void AddAlertRoutes(net::Router* router, const alert::AlertEngine* engine) {
  router->Handle("GET", "/api/v1/alerts",
                 [engine](const net::HttpRequest&) { return PromAlerts(engine); });
  router->Handle("GET", "/api/v1/rules",
                 [engine](const net::HttpRequest&) { return PromRules(engine); });
  router->Handle("GET", "/api/v1/alerts/records",
                 [engine](const net::HttpRequest& req) { return Records(engine, req); });
}

}  // namespace vigil::api

#include "api/action_routes.h"

#include <nlohmann/json.hpp>

#include "alert/alert_json.h"
#include "api/params.h"
#include "core/json_writer.h"
#include "core/strings.h"

namespace vigil::api {
namespace {

constexpr std::string_view kPrefix = "/api/v1/actions/";
constexpr size_t kMaxByBytes = 128;
constexpr size_t kMaxListed = 1000;

void WriteTime(JsonWriter* w, const char* key, int64_t ms) {
  std::string name(key);
  if (ms == 0) {
    w->Key(name).Null().Key(name + "_ms").Null();
    return;
  }
  w->Key(name).String(FormatRfc3339(ms)).Key(name + "_ms").Int(ms);
}

void WriteEntry(JsonWriter* w, const alert::ActionEntry& e) {
  w->BeginObject();
  w->Key("id").Int(e.id).Key("action").String(e.action);
  w->Key("on").String(alert::ActionTriggerName(e.trigger));
  w->Key("state").String(alert::ActionStateName(e.state)).Key("dry_run").Bool(e.dry_run);
  w->Key("command").BeginArray();
  for (const std::string& a : e.command) w->String(a);
  w->EndArray();
  w->Key("alert").BeginObject().Key("id").String(e.alert_id).Key("rule").String(e.alert_rule);
  w->Key("labels");
  alert::WriteLabels(w, e.labels);
  w->Key("owner").String(e.owner).EndObject();
  WriteTime(w, "created", e.created_ms);
  WriteTime(w, "run_at", e.run_at_ms);
  WriteTime(w, "started", e.started_ms);
  WriteTime(w, "finished", e.finished_ms);
  w->Key("timeout_ms").Int(e.timeout_ms);
  w->Key("cancelled_by").String(e.cancelled_by);
  w->Key("exit_code");
  if (e.exit_code) {
    w->Int(*e.exit_code);
  } else {
    w->Null();
  }
  w->Key("output").String(e.output).Key("output_truncated").Bool(e.output_truncated);
  w->Key("error").String(e.error);
  w->EndObject();
}

void WriteSpec(JsonWriter* w, const alert::ActionSpec& a) {
  w->BeginObject().Key("name").String(a.name).Key("on").String(alert::ActionTriggerName(a.on));
  if (a.on == alert::ActionTrigger::kGpusIdle) w->Key("idle_for_ms").Int(a.idle_for_ms);
  w->Key("match").BeginObject();
  for (const auto& [label, glob] : a.match) w->Key(label).String(glob);
  w->EndObject();
  w->Key("command").BeginArray();
  for (const std::string& s : a.command) w->String(s);
  w->EndArray();
  w->Key("dry_run").Bool(a.dry_run).Key("confirm_window_ms").Int(a.confirm_window_ms);
  w->Key("timeout_ms").Int(a.timeout_ms).EndObject();
}

net::HttpResponse List(alert::ActionRunner* runner, const net::HttpRequest& req) {
  auto params = GetParams(req);
  if (!params.ok()) return FromStatus(params.status());
  auto limit = UintParam(*params, "limit", 100, kMaxListed);
  if (!limit.ok()) return FromStatus(limit.status());
  auto id = UintParam(*params, "id", 0, INT64_MAX);
  if (!id.ok()) return FromStatus(id.status());
  auto entries = runner->List(static_cast<size_t>(*limit), *id);
  if (!entries.ok()) return FromStatus(entries.status());
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  w.Key("now_ms").Int(runner->NowMillis());
  w.Key("actions").BeginArray();
  for (const alert::ActionEntry& e : *entries) WriteEntry(&w, e);
  w.EndArray();
  w.Key("configured").BeginArray();
  for (const alert::ActionSpec& a : runner->actions()) WriteSpec(&w, a);
  w.EndArray();
  w.EndObject().EndObject();
  return JsonOk(w.Release());
}

// "/api/v1/actions/12/cancel" -> 12; 0 when the path is not that shape.
int64_t CancelId(std::string_view path) {
  std::string_view rest = path.substr(kPrefix.size());
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos || rest.substr(slash) != "/cancel") return 0;
  auto n = ParseUint64(rest.substr(0, slash));
  return n && *n > 0 && *n <= INT64_MAX ? static_cast<int64_t>(*n) : 0;
}

net::HttpResponse Cancel(alert::ActionRunner* runner, const net::HttpRequest& req) {
  if (auto refused = RefuseCrossSite(req, "cancel actions")) return *refused;
  const int64_t id = CancelId(req.path);
  if (id == 0) return Error(404, "not_found", "the path is /api/v1/actions/{id}/cancel");
  using nlohmann::json;
  json body = req.body.empty() ? json::object()
                               : json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return Error(400, "bad_data", "the body must be a JSON object");
  std::string by = "someone";
  for (const auto& [key, v] : body.items()) {
    if (key != "by" || !v.is_string() || v.get<std::string>().empty() ||
        v.get<std::string>().size() > kMaxByBytes) {
      return Error(400, "bad_data",
                   "unexpected or bad \"" + std::string(CutUtf8(key, 64)) +
                       "\": the body is {\"by\": who cancels it (1 to 128 bytes)}");
    }
    by = v.get<std::string>();
  }
  auto e = runner->Cancel(id, by);
  if (e.status().code() == StatusCode::kNotFound) {
    return Error(404, "not_found", e.status().message());
  }
  if (e.status().code() == StatusCode::kFailedPrecondition) {
    return Error(409, "conflict", e.status().message());
  }
  if (!e.ok()) return FromStatus(e.status());
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data");
  WriteEntry(&w, *e);
  w.EndObject();
  return JsonOk(w.Release());
}

}  // namespace

void AddActionRoutes(net::Router* router, alert::AlertEngine* engine) {
  alert::ActionRunner* runner = engine->actions();
  router->Handle("GET", "/api/v1/actions",
                 [runner](const net::HttpRequest& req) { return List(runner, req); });
  router->HandlePrefix("POST", std::string(kPrefix),
                       [runner](const net::HttpRequest& req) { return Cancel(runner, req); });
}

}  // namespace vigil::api

#include "alert/alert_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/strings.h"

namespace vigil::alert {

using nlohmann::json;

void WriteLabels(JsonWriter* w, const wire::Labels& labels) {
  w->BeginObject();
  for (const wire::Label& l : labels) w->Key(l.name).String(l.value);
  w->EndObject();
}

void WriteAlert(JsonWriter* w, const Alert& a, bool inhibited, bool silenced) {
  w->BeginObject();
  w->Key("id").String(a.id);
  w->Key("rule").String(a.rule);
  w->Key("state").String(AlertStateName(a.state));
  w->Key("severity").String(SeverityName(a.severity));
  w->Key("labels");
  WriteLabels(w, a.labels);
  w->Key("value").Double(a.value);
  w->Key("threshold").Double(a.threshold);
  int64_t started = a.fired_at_ms != 0 ? a.fired_at_ms : a.active_at_ms;
  w->Key("started_at").String(FormatRfc3339(started));
  w->Key("resolved_at");
  if (a.resolved_at_ms != 0) {
    w->String(FormatRfc3339(a.resolved_at_ms));
  } else {
    w->Null();
  }
  w->Key("summary").String(a.summary_en);
  w->Key("summary_zh").String(a.summary_zh);
  if (!a.owner.empty()) w->Key("owner").String(a.owner);
  if (!a.description_en.empty()) w->Key("description").String(a.description_en);
  if (!a.description_zh.empty()) w->Key("description_zh").String(a.description_zh);
  if (!a.steps_en.empty()) w->Key("steps").String(a.steps_en);
  if (!a.steps_zh.empty()) w->Key("steps_zh").String(a.steps_zh);
  if (!a.log_excerpt.empty()) {
    w->Key("log_excerpt").BeginArray();
    for (const std::string& line : a.log_excerpt) w->String(line);
    w->EndArray();
  }
  // The diagnosis is an object of its own, kept as it was written.
  w->Key("diagnosis").Raw(a.diagnosis.empty() ? "{}" : a.diagnosis);
  if (inhibited) w->Key("inhibited").Bool(true);
  if (silenced) w->Key("silenced").Bool(true);
  w->Key("active_at_ms").Int(a.active_at_ms);
  w->Key("fired_at_ms").Int(a.fired_at_ms);
  w->Key("resolved_at_ms").Int(a.resolved_at_ms);
  w->Key("last_eval_ms").Int(a.last_eval_ms);
  w->Key("keep_firing_since_ms").Int(a.keep_firing_since_ms);
  w->EndObject();
}

std::string AlertJson(const Alert& alert) {
  JsonWriter w;
  WriteAlert(&w, alert);
  return w.Release();
}

Result<Alert> ParseAlert(std::string_view text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return InvalidArgument("alert record is not a JSON object");
  Alert a;
  auto str = [&](const char* key) -> std::string {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : "";
  };
  auto num = [&](const char* key) -> int64_t {
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  };
  auto real = [&](const char* key) -> double {
    auto it = j.find(key);
    return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
  };
  a.id = str("id");
  a.rule = str("rule");
  auto sev = ParseSeverity(str("severity"));
  std::string state = str("state");
  if (a.id.empty() || a.rule.empty() || !sev)
    return InvalidArgument("alert record lacks id, rule or severity");
  a.severity = *sev;
  if (state == "pending")
    a.state = AlertState::kPending;
  else if (state == "firing")
    a.state = AlertState::kFiring;
  else if (state == "resolved")
    a.state = AlertState::kResolved;
  else
    return InvalidArgument("alert record has state \"" + state + "\"");
  if (auto it = j.find("labels"); it != j.end() && it->is_object()) {
    for (const auto& [k, v] : it->items()) {
      if (v.is_string()) a.labels.push_back({k, v.get<std::string>()});
    }
  }
  std::sort(a.labels.begin(), a.labels.end(),
            [](const wire::Label& x, const wire::Label& y) { return x.name < y.name; });
  a.value = real("value");
  a.threshold = real("threshold");
  a.summary_en = str("summary");
  a.summary_zh = str("summary_zh");
  a.owner = str("owner");
  a.description_en = str("description");
  a.description_zh = str("description_zh");
  a.steps_en = str("steps");
  a.steps_zh = str("steps_zh");
  if (auto it = j.find("log_excerpt"); it != j.end() && it->is_array()) {
    for (const auto& line : *it) {
      if (line.is_string()) a.log_excerpt.push_back(line.get<std::string>());
    }
  }
  if (auto it = j.find("diagnosis"); it != j.end() && it->is_object()) a.diagnosis = it->dump();
  a.active_at_ms = num("active_at_ms");
  a.fired_at_ms = num("fired_at_ms");
  a.resolved_at_ms = num("resolved_at_ms");
  a.last_eval_ms = num("last_eval_ms");
  a.keep_firing_since_ms = num("keep_firing_since_ms");
  return a;
}

}  // namespace vigil::alert

#include "notify/webhook.h"

#include <cstdio>
#include <map>

#include "core/json_writer.h"
#include "core/strings.h"
#include "net/http_client.h"
#include "notify/message.h"

namespace vigil::notify {
namespace {

using alert::Alert;
using alert::AlertState;

// Labels (or annotations) that every alert of the group has with one value.
std::map<std::string, std::string> Common(
    const std::vector<std::map<std::string, std::string>>& sets) {
  if (sets.empty()) return {};
  std::map<std::string, std::string> common = sets[0];
  for (size_t i = 1; i < sets.size(); ++i) {
    std::erase_if(common, [&](const auto& kv) {
      auto it = sets[i].find(kv.first);
      return it == sets[i].end() || it->second != kv.second;
    });
  }
  return common;
}

std::map<std::string, std::string> LabelMap(const Alert& a) {
  std::map<std::string, std::string> m;
  for (const wire::Label& l : a.labels) m[l.name] = l.value;
  return m;
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::map<std::string, std::string> Annotations(const Alert& a) {
  std::map<std::string, std::string> out = {{"summary", a.summary_en},
                                            {"summary_zh", a.summary_zh},
                                            {"rule", a.rule},
                                            {"value", Number(a.value)},
                                            {"threshold", Number(a.threshold)}};
  // Alertmanager's convention: a one-line summary, then a description.
  if (!a.description_en.empty()) out["description"] = a.description_en;
  if (!a.description_zh.empty()) out["description_zh"] = a.description_zh;
  if (!a.steps_en.empty()) out["steps"] = a.steps_en;
  if (!a.steps_zh.empty()) out["steps_zh"] = a.steps_zh;
  // Annotations are strings: the excerpt's lines, one per line.
  if (!a.log_excerpt.empty() && a.state != alert::AlertState::kResolved) {
    std::string lines;
    for (const std::string& l : a.log_excerpt) lines += (lines.empty() ? "" : "\n") + l;
    out["log_excerpt"] = std::move(lines);
  }
  // The diagnosis' log templates the same way: "×312 error, new  <text>".
  if (a.state != alert::AlertState::kResolved) {
    std::string lines;
    for (const TemplateLine& t : DiagnosisTemplates(a.diagnosis, Language::kEnglish, 10, 240)) {
      lines += (lines.empty() ? "" : "\n") + t.mark + "  " + t.text;
    }
    if (!lines.empty()) out["log_templates"] = std::move(lines);
  }
  return out;
}

void WriteMap(JsonWriter* w, const std::map<std::string, std::string>& m) {
  w->BeginObject();
  for (const auto& [k, v] : m) w->Key(k).String(v);
  w->EndObject();
}

}  // namespace

std::string WebhookPayload(const alert::Notification& n) {
  bool firing = false;
  std::vector<std::map<std::string, std::string>> labels, annotations;
  for (const Alert& a : n.alerts) {
    firing |= a.state == AlertState::kFiring;
    labels.push_back(LabelMap(a));
    annotations.push_back(Annotations(a));
  }
  JsonWriter w;
  w.BeginObject();
  w.Key("receiver").String(n.receiver);
  w.Key("status").String(firing ? "firing" : "resolved");
  w.Key("alerts").BeginArray();
  for (size_t i = 0; i < n.alerts.size(); ++i) {
    const Alert& a = n.alerts[i];
    w.BeginObject();
    w.Key("status").String(a.state == AlertState::kResolved ? "resolved" : "firing");
    w.Key("labels");
    WriteMap(&w, labels[i]);
    w.Key("annotations");
    WriteMap(&w, annotations[i]);
    w.Key("startsAt").String(FormatRfc3339(a.fired_at_ms != 0 ? a.fired_at_ms : a.active_at_ms));
    w.Key("endsAt").String(a.state == AlertState::kResolved ? FormatRfc3339(a.resolved_at_ms)
                                                            : "0001-01-01T00:00:00Z");
    w.Key("generatorURL").String(n.external_url + "/#/alerts?id=" + a.id);
    w.Key("fingerprint").String(a.id);
    w.EndObject();
  }
  w.EndArray();
  w.Key("groupLabels").BeginObject();
  for (const wire::Label& l : n.group_labels) w.Key(l.name).String(l.value);
  w.EndObject();
  w.Key("commonLabels");
  WriteMap(&w, Common(labels));
  w.Key("commonAnnotations");
  WriteMap(&w, Common(annotations));
  w.Key("externalURL").String(n.external_url);
  w.Key("version").String("4");
  w.Key("groupKey").String(n.group_key);
  w.Key("truncatedAlerts").Int(0);
  w.EndObject();
  std::string body = w.Release();
  body.push_back('\n');  // as Go's json.Encoder ends it
  return body;
}

Status WebhookChannel::Send(const alert::Notification& n) {
  net::HttpClientRequest req;
  req.method = "POST";
  req.url = options_.url;
  req.headers = options_.headers;
  req.headers.Set("Content-Type", "application/json");
  req.body = WebhookPayload(n);
  req.timeout = options_.timeout;
  req.max_response_bytes = 64 * 1024;
  auto r = net::HttpFetch(req);
  if (!r.ok()) return Unavailable("webhook " + options_.url + ": " + r.status().message());
  if (r->status >= 200 && r->status < 300) return Status::Ok();
  std::string what = "webhook " + options_.url + " answered HTTP " + std::to_string(r->status);
  if (r->status >= 500) return Unavailable(what);
  return FailedPrecondition(what);
}

}  // namespace vigil::notify

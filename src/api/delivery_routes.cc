#include "api/delivery_routes.h"

#include "api/params.h"
#include "core/json_writer.h"
#include "core/strings.h"

namespace vigil::api {
namespace {

using alert::DeliveryState;

void WriteCounts(JsonWriter* w, const std::map<DeliveryState, int64_t>& counts) {
  w->BeginObject();
  for (DeliveryState s :
       {DeliveryState::kPending, DeliveryState::kDelivered, DeliveryState::kFailed,
        DeliveryState::kCapped, DeliveryState::kSuperseded}) {
    auto it = counts.find(s);
    w->Key(alert::DeliveryStateName(s)).Int(it == counts.end() ? 0 : it->second);
  }
  w->EndObject();
}

void WriteTime(JsonWriter* w, const char* key, int64_t ms) {
  w->Key(key);
  if (ms == 0) {
    w->Null();
  } else {
    w->String(FormatRfc3339(ms));
  }
}

void WriteEntry(JsonWriter* w, const alert::DeliveryEntry& e) {
  w->BeginObject();
  w->Key("id").Int(e.id);
  w->Key("receiver").String(e.receiver);
  w->Key("group_key").String(e.group_key);
  w->Key("state").String(alert::DeliveryStateName(e.state));
  w->Key("attempts").Int(e.attempts);
  WriteTime(w, "created_at", e.created_ms);
  WriteTime(w, "updated_at", e.updated_ms);
  WriteTime(w, "next_attempt_at", e.state == DeliveryState::kPending ? e.next_attempt_ms : 0);
  w->Key("last_answer").String(e.last_answer);
  // What it says, briefly: each alert's name, severity and state.
  w->Key("alerts").BeginArray();
  for (const alert::Alert& a : e.notification.alerts) {
    w->BeginObject().Key("id").String(a.id).Key("rule").String(a.rule);
    w->Key("severity").String(SeverityName(a.severity));
    w->Key("state").String(AlertStateName(a.state)).EndObject();
  }
  w->EndArray();
  w->EndObject();
}

net::HttpResponse Notifications(const alert::AlertEngine* engine, const net::HttpRequest& req) {
  auto params = GetParams(req);
  if (!params.ok()) return FromStatus(params.status());
  alert::DeliveryFilter filter;
  if (auto s = Param(*params, "state"); s && !s->empty()) {
    filter.state = alert::ParseDeliveryState(*s);
    if (!filter.state) {
      return Error(400, "bad_data",
                   "state must be pending, delivered, failed, capped or superseded");
    }
  }
  filter.receiver = Param(*params, "receiver").value_or("");
  if (auto l = Param(*params, "limit")) {
    auto n = ParseUint64(*l);
    if (!n || *n > 1000) return Error(400, "bad_data", "limit must be from 0 to 1000");
    filter.limit = static_cast<size_t>(*n);
  }
  auto entries = engine->Deliveries(filter);
  if (!entries.ok()) return FromStatus(entries.status());
  auto summary = engine->DeliveryCounts();
  if (!summary.ok()) return FromStatus(summary.status());
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  w.Key("counts");
  WriteCounts(&w, summary->counts);
  w.Key("channels").BeginArray();
  for (const auto& [name, c] : summary->channels) {
    w.BeginObject().Key("name").String(name).Key("failing").Bool(c.failing);
    w.Key("counts");
    WriteCounts(&w, c.counts);
    w.Key("last_error").String(c.last_error);
    WriteTime(&w, "last_error_at", c.last_error_ms);
    WriteTime(&w, "last_delivered_at", c.last_delivered_ms);
    w.EndObject();
  }
  w.EndArray();
  w.Key("entries").BeginArray();
  for (const alert::DeliveryEntry& e : *entries) WriteEntry(&w, e);
  w.EndArray();
  w.EndObject().EndObject();
  return JsonOk(w.Release());
}

}  // namespace

void AddDeliveryRoutes(net::Router* router, const alert::AlertEngine* engine) {
  router->Handle("GET", "/api/v1/notifications",
                 [engine](const net::HttpRequest& req) { return Notifications(engine, req); });
}

}  // namespace vigil::api

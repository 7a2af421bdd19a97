#include "api/inbox_routes.h"

#include <nlohmann/json.hpp>

#include "alert/alert_json.h"
#include "api/params.h"
#include "core/json_writer.h"
#include "core/strings.h"

namespace vigil::api {
namespace {

constexpr size_t kMaxRecipientBytes = 128;
constexpr size_t kMaxMarkedIds = 500;

void WriteItem(JsonWriter* w, const alert::InboxItem& item) {
  w->BeginObject();
  w->Key("id").Int(item.id);
  w->Key("kind").String(item.kind);
  w->Key("at").String(FormatRfc3339(item.at_ms));
  w->Key("at_ms").Int(item.at_ms);
  w->Key("read").Bool(item.read);
  w->Key("recipients").BeginArray();
  for (const std::string& r : item.recipients) w->String(r);
  w->EndArray();
  w->Key("note").String(item.note);
  w->Key("alert");
  alert::WriteAlert(w, item.alert);
  w->EndObject();
}

void WriteCounts(JsonWriter* w, const alert::InboxCounts& c) {
  w->BeginObject().Key("total").Int(c.total).Key("unread").Int(c.unread);
  w->Key("unread_by_severity").BeginObject();
  for (alert::Severity s :
       {alert::Severity::kCritical, alert::Severity::kWarning, alert::Severity::kInfo}) {
    auto it = c.unread_by_severity.find(s);
    w->Key(alert::SeverityName(s)).Int(it == c.unread_by_severity.end() ? 0 : it->second);
  }
  w->EndObject().EndObject();
}

void WriteRecipients(JsonWriter* w, const std::vector<alert::Recipient>& recipients) {
  w->BeginArray();
  for (const alert::Recipient& r : recipients) {
    w->BeginObject().Key("name").String(r.name);
    w->Key("kind").String(r.team ? "team" : "person");
    if (!r.team_name.empty()) w->Key("team").String(r.team_name);
    if (!r.lead.empty()) w->Key("lead").String(r.lead);
    w->EndObject();
  }
  w->EndArray();
}

net::HttpResponse ListInbox(const alert::AlertEngine* engine, const net::HttpRequest& req) {
  auto params = GetParams(req);
  if (!params.ok()) return FromStatus(params.status());
  alert::InboxFilter filter;
  filter.recipient = Param(*params, "recipient").value_or("");
  if (filter.recipient.size() > kMaxRecipientBytes) {
    return Error(400, "bad_data", "recipient is too long");
  }
  if (auto s = Param(*params, "severity"); s && !s->empty()) {
    filter.severity = alert::ParseSeverity(*s);
    if (!filter.severity)
      return Error(400, "bad_data", "severity must be critical, warning or info");
  }
  const std::string unread = Param(*params, "unread").value_or("");
  filter.unread_only = unread == "1" || unread == "true";
  auto limit = UintParam(*params, "limit", 100, alert::Inbox::kMaxListed);
  if (!limit.ok()) return FromStatus(limit.status());
  filter.limit = static_cast<size_t>(*limit);
  auto before = UintParam(*params, "before", 0, INT64_MAX);
  if (!before.ok()) return FromStatus(before.status());
  filter.before_id = *before;

  auto items = engine->InboxItems(filter);
  if (!items.ok()) return FromStatus(items.status());
  auto counts = engine->InboxCountsFor(filter.recipient);
  if (!counts.ok()) return FromStatus(counts.status());
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  w.Key("items").BeginArray();
  for (const alert::InboxItem& item : *items) WriteItem(&w, item);
  w.EndArray();
  w.Key("counts");
  WriteCounts(&w, *counts);
  w.Key("recipients");
  WriteRecipients(&w, engine->Recipients());
  w.EndObject().EndObject();
  return JsonOk(w.Release());
}

net::HttpResponse MarkInbox(alert::AlertEngine* engine, const net::HttpRequest& req) {
  if (auto refused = RefuseCrossSite(req, "change the inbox")) return *refused;
  using nlohmann::json;
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return Error(400, "bad_data", "the body must be a JSON object");
  std::string recipient;
  std::vector<int64_t> ids;
  bool read = true;
  for (const auto& [key, v] : body.items()) {
    if (key == "recipient" && v.is_string() && v.get<std::string>().size() <= kMaxRecipientBytes) {
      recipient = v.get<std::string>();
    } else if (key == "read" && v.is_boolean()) {
      read = v.get<bool>();
    } else if (key == "ids" && v.is_array() && !v.empty() && v.size() <= kMaxMarkedIds) {
      for (const json& id : v) {
        if (!id.is_number_integer() || id.get<int64_t>() <= 0) {
          return Error(400, "bad_data", "ids must be item ids (positive integers)");
        }
        ids.push_back(id.get<int64_t>());
      }
    } else {
      return Error(400, "bad_data",
                   "unexpected or bad \"" + std::string(CutUtf8(key, 64)) +
                       "\": the body is {\"recipient\": name, \"ids\": [1 to 500 item ids], "
                       "\"read\": true|false}");
    }
  }
  auto changed = engine->MarkInbox(recipient, ids, read);
  if (!changed.ok()) return FromStatus(changed.status());
  JsonWriter w;
  w.BeginObject().Key("status").String("success").Key("data").BeginObject();
  w.Key("changed").Int(*changed).EndObject().EndObject();
  return JsonOk(w.Release());
}

}  // namespace

void AddInboxRoutes(net::Router* router, alert::AlertEngine* engine) {
  router->Handle("GET", "/api/v1/inbox",
                 [engine](const net::HttpRequest& req) { return ListInbox(engine, req); });
  router->Handle("POST", "/api/v1/inbox/read",
                 [engine](const net::HttpRequest& req) { return MarkInbox(engine, req); });
}

}  // namespace vigil::api

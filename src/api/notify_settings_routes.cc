#include "api/notify_settings_routes.h"

#include "api/params.h"
#include "core/json_writer.h"
#include "core/strings.h"

namespace vigil::api {
namespace {

constexpr std::string_view kChannelPrefix = "/api/v1/notify/channels/";
constexpr std::string_view kRecipientPrefix = "/api/v1/notify/recipients/";
// Longer names are a mistake, not a channel (they go into group keys).
constexpr size_t kMaxNameBytes = 128;
// A receiver's answer is a sentence; a huge error page is not worth showing.
constexpr size_t kMaxAnswerBytes = 1024;

net::HttpResponse FromSettingsStatus(const Status& st) {
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
      return Error(400, "bad_data", st.message());
    case StatusCode::kNotFound:
      return Error(404, "not_found", st.message());
    case StatusCode::kFailedPrecondition:
      return Error(409, "conflict", st.message());
    case StatusCode::kResourceExhausted:
      return Error(429, "busy", st.message());
    default:
      return Error(500, "internal", st.message());
  }
}

net::HttpResponse Success(std::string_view data_json) {
  std::string body = R"({"status":"success","data":)";
  body += data_json;
  body += "}";
  return JsonOk(std::move(body));
}

// The name in `prefix`<name> (percent-decoded by the server) of a channel
// or recipient (`what`), or an error saying what is wrong with it.
Result<std::string> NameOf(const net::HttpRequest& req, std::string_view prefix,
                           const std::string& what) {
  std::string_view name = std::string_view(req.path).substr(prefix.size());
  if (name.empty() || name.size() > kMaxNameBytes || name.find('/') != std::string_view::npos) {
    return InvalidArgument("the path must end with a " + what + "'s name (1 to 128 bytes, no '/')");
  }
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return InvalidArgument("a " + what + "'s name has no control characters");
    }
  }
  return std::string(name);
}

// A view's answer, or its error.
net::HttpResponse Viewed(const Result<std::string>& view) {
  if (!view.ok()) return FromSettingsStatus(view.status());
  return Success(*view);
}

// {"name", "saved" or "deleted": true}.
net::HttpResponse Changed(const std::string& name, const net::HttpRequest& req) {
  JsonWriter w;
  w.BeginObject().Key("name").String(name);
  w.Key(req.method == "PUT" ? "saved" : "deleted").Bool(true).EndObject();
  return Success(w.Release());
}

net::HttpResponse ChangeChannel(NotifySettings* settings, const net::HttpRequest& req) {
  if (auto refused = RefuseCrossSite(req, "change notification channels")) return *refused;
  auto name = NameOf(req, kChannelPrefix, "channel");
  if (!name.ok()) return FromSettingsStatus(name.status());
  Status st = req.method == "PUT" ? settings->Put(*name, req.body) : settings->Remove(*name);
  if (!st.ok()) return FromSettingsStatus(st);
  return Changed(*name, req);
}

net::HttpResponse ChangeRecipient(NotifySettings* settings, const net::HttpRequest& req) {
  if (auto refused = RefuseCrossSite(req, "change notification recipients")) return *refused;
  auto name = NameOf(req, kRecipientPrefix, "recipient");
  if (!name.ok()) return FromSettingsStatus(name.status());
  Status st = req.method == "PUT" ? settings->PutRecipient(*name, req.body)
                                  : settings->RemoveRecipient(*name);
  if (!st.ok()) return FromSettingsStatus(st);
  return Changed(*name, req);
}

net::HttpResponse PutRoutes(NotifySettings* settings, const net::HttpRequest& req) {
  if (auto refused = RefuseCrossSite(req, "change notification routes")) return *refused;
  Status st = settings->PutRoutes(req.body);
  if (!st.ok()) return FromSettingsStatus(st);
  return Success(R"({"saved":true})");
}

net::HttpResponse PostTest(NotifySettings* settings, const net::HttpRequest& req) {
  if (auto refused = RefuseCrossSite(req, "send test notifications")) return *refused;
  auto outcome = settings->Test(req.body);
  if (!outcome.ok()) return FromSettingsStatus(outcome.status());
  const Status& d = outcome->delivery;
  JsonWriter w;
  w.BeginObject().Key("channel").String(outcome->channel).Key("type").String(outcome->type);
  w.Key("delivered").Bool(d.ok());
  // The receiver's refusal; its URLs cut to scheme and host, as the
  // delivery log keeps them (a hook's path or query may hold its secret).
  const std::string answer = d.ok() ? "delivered" : RedactUrls(d.message());
  w.Key("answer").String(CutUtf8(answer, kMaxAnswerBytes));
  w.EndObject();
  return Success(w.Release());
}

}  // namespace

void AddNotifySettingsRoutes(net::Router* router, NotifySettings* settings) {
  net::RouteOptions small;
  small.max_body_bytes = kMaxNotifySettingsBody;
  router->Handle("GET", "/api/v1/notify/channels",
                 [settings](const net::HttpRequest&) { return Viewed(settings->View()); });
  router->Handle("GET", "/api/v1/notify/recipients", [settings](const net::HttpRequest&) {
    return Viewed(settings->RecipientsView());
  });
  router->Handle("GET", "/api/v1/notify/routes",
                 [settings](const net::HttpRequest&) { return Viewed(settings->RoutesView()); });
  for (const char* method : {"PUT", "DELETE"}) {
    router->HandlePrefix(
        method, std::string(kChannelPrefix),
        [settings](const net::HttpRequest& req) { return ChangeChannel(settings, req); }, small);
    router->HandlePrefix(
        method, std::string(kRecipientPrefix),
        [settings](const net::HttpRequest& req) { return ChangeRecipient(settings, req); }, small);
  }
  router->Handle(
      "PUT", "/api/v1/notify/routes",
      [settings](const net::HttpRequest& req) { return PutRoutes(settings, req); }, small);
  router->Handle(
      "POST", "/api/v1/notify/test",
      [settings](const net::HttpRequest& req) { return PostTest(settings, req); }, small);
}

}  // namespace vigil::api

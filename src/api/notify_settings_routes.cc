#include "api/notify_settings_routes.h"

#include "api/params.h"
#include "core/json_writer.h"
#include "core/strings.h"

namespace vigil::api {
namespace {

constexpr std::string_view kChannelPrefix = "/api/v1/notify/channels/";
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

// The channel name in /api/v1/notify/channels/<name> (percent-decoded by
// the server), or an error saying what is wrong with it.
Result<std::string> NameOf(const net::HttpRequest& req) {
  std::string_view name = std::string_view(req.path).substr(kChannelPrefix.size());
  if (name.empty() || name.size() > kMaxNameBytes || name.find('/') != std::string_view::npos) {
    return InvalidArgument("the path must end with a channel's name (1 to 128 bytes, no '/')");
  }
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return InvalidArgument("a channel's name has no control characters");
    }
  }
  return std::string(name);
}

net::HttpResponse GetChannels(NotifySettings* settings) {
  auto view = settings->View();
  if (!view.ok()) return FromSettingsStatus(view.status());
  return Success(*view);
}

net::HttpResponse ChangeChannel(NotifySettings* settings, const net::HttpRequest& req) {
  if (auto refused = RefuseCrossSite(req, "change notification channels")) return *refused;
  auto name = NameOf(req);
  if (!name.ok()) return FromSettingsStatus(name.status());
  Status st = req.method == "PUT" ? settings->Put(*name, req.body) : settings->Remove(*name);
  if (!st.ok()) return FromSettingsStatus(st);
  JsonWriter w;
  w.BeginObject().Key("name").String(*name);
  w.Key(req.method == "PUT" ? "saved" : "deleted").Bool(true).EndObject();
  return Success(w.Release());
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
                 [settings](const net::HttpRequest&) { return GetChannels(settings); });
  for (const char* method : {"PUT", "DELETE"}) {
    router->HandlePrefix(
        method, std::string(kChannelPrefix),
        [settings](const net::HttpRequest& req) { return ChangeChannel(settings, req); }, small);
  }
  router->Handle(
      "POST", "/api/v1/notify/test",
      [settings](const net::HttpRequest& req) { return PostTest(settings, req); }, small);
}

}  // namespace vigil::api

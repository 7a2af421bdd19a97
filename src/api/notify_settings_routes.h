// The notification settings API (docs/http-api.md "Notification settings"),
// what the UI's Notifications page uses to set up channels without editing
// config.json by hand:
//   GET    /api/v1/notify/channels         the channels and routes, every
//                                          secret left out
//   PUT    /api/v1/notify/channels/<name>  adds or replaces one channel (the
//                                          body: one object of config.json's
//                                          notify.channels); a secret left
//                                          out keeps the stored one
//   DELETE /api/v1/notify/channels/<name>  removes it (409 while a route
//                                          names it)
//   POST   /api/v1/notify/test             {"channel": NAME} or
//                                          {"channel_config": {...}}: sends
//                                          the test notification and says
//                                          whether it arrived
//   GET    /api/v1/notify/recipients       the people and teams
//   PUT    /api/v1/notify/recipients/<name>  adds or replaces one (the body:
//                                          one object of notify.recipients)
//   DELETE /api/v1/notify/recipients/<name>  removes it (409 while a route
//                                          names it, it leads a team, or a
//                                          person is in it)
//   GET    /api/v1/notify/routes           the routes, in order
//   PUT    /api/v1/notify/routes           {"routes": [...]}: the whole
//                                          ordered list
// The routes do HTTP only (cross-site refusal, body bounds, status codes);
// what config.json holds, how it is validated, written and applied to the
// running engine is the composition's (cli/notify_settings.h implements
// NotifySettings), so the settings use the very parser config.json is read
// with.
//
// Status codes: InvalidArgument 400, NotFound 404, FailedPrecondition 409,
// ResourceExhausted 429 (a test already being sent), others 500; each with
// Prometheus' error JSON.
//
// Thread safety: handlers run on the server's threads, several at once;
// NotifySettings must be safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "net/http_server.h"

namespace vigil::api {

// What a test notification came to.
struct NotifyTestOutcome {
  std::string channel;  // its name
  std::string type;
  Status delivery;  // Ok: the receiver accepted it; else its refusal
};

class NotifySettings {
 public:
  virtual ~NotifySettings() = default;
  // The `data` of GET /api/v1/notify/channels, a JSON object.
  virtual Result<std::string> View() = 0;
  // Adds or replaces the channel `name` from `body` (a JSON object) and
  // applies the new set to the running server.
  virtual Status Put(const std::string& name, std::string_view body) = 0;
  virtual Status Remove(const std::string& name) = 0;
  // Sends the test notification to the channel `body` names or describes.
  // An error when none could be tried (a bad body, an unknown name); a
  // refusal of the receiver is the outcome's `delivery`.
  virtual Result<NotifyTestOutcome> Test(std::string_view body) = 0;
  // The `data` of GET /api/v1/notify/recipients, and one recipient added,
  // replaced or removed, applied to the running server.
  virtual Result<std::string> RecipientsView() = 0;
  virtual Status PutRecipient(const std::string& name, std::string_view body) = 0;
  virtual Status RemoveRecipient(const std::string& name) = 0;
  // The `data` of GET /api/v1/notify/routes, and the whole list replaced.
  virtual Result<std::string> RoutesView() = 0;
  virtual Status PutRoutes(std::string_view body) = 0;
};

// The bodies these routes take are one channel, one recipient or the
// routes: far below config.json's 1 MiB.
inline constexpr size_t kMaxNotifySettingsBody = 64 << 10;

void AddNotifySettingsRoutes(net::Router* router, NotifySettings* settings);

}  // namespace vigil::api

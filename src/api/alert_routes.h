// The alerts API (docs/http-api.md "Alerts"):
//   GET /api/v1/alerts          pending and firing alerts in Prometheus' shape
//                               (Grafana and other Prometheus clients read it)
//   GET /api/v1/rules           the rules in effect in Prometheus' shape, one
//                               alerting rule per level, with Vigil's details
//                               (`vigil`: thresholds, clear thresholds, unit)
//   GET /api/v1/alerts/records  Vigil's alert records (alert/alert_json.h):
//                               `vigil alerts --json` and the UI; `all=1`
//                               adds the resolved history (newest first,
//                               `limit`, default 500); "inhibited" and
//                               "silenced" mark the muted ones
//   GET    /api/v1/silences     every silence kept, newest first, in
//                               Alertmanager's API v2 shape (alert/silence.h)
//   POST   /api/v1/silences     adds one from Alertmanager's body
//                               (PostableSilence) or with "duration" instead
//                               of "endsAt": {"silenceID": "..."}
//   GET    /api/v1/silence/<id> one silence
//   DELETE /api/v1/silence/<id> expires it now; answers it, expired
//   GET /api/v1/notifications   the delivery log (delivery_routes.h)
//   GET /api/v1/inbox, POST /api/v1/inbox/read: the inbox (inbox_routes.h)
// Bad input gets 400 with Prometheus' error JSON saying what is wrong.
// The routes only render and forward to what alert::AlertEngine holds.
#pragma once

#include <string_view>

#include "alert/engine.h"
#include "net/http_server.h"

namespace vigil::api {

void AddAlertRoutes(net::Router* router, alert::AlertEngine* engine);

// The body of POST /api/v1/silences as a silence (id and created times not
// yet set), with `now_ms` for a missing startsAt. InvalidArgument names the
// bad field.
Result<alert::Silence> ParsePostableSilence(std::string_view body, int64_t now_ms);

}  // namespace vigil::api

// The alerts API (docs/http-api.md "Alerts"):
//   GET /api/v1/alerts          pending and firing alerts in Prometheus' shape
//                               (Grafana and other Prometheus clients read it)
//   GET /api/v1/rules           the rules in effect in Prometheus' shape, one
//                               alerting rule per level, with Vigil's details
//                               (`vigil`: thresholds, clear thresholds, unit)
//   GET /api/v1/alerts/records  Vigil's alert records (alert/alert_json.h):
//                               `vigil alerts --json` and the UI; `all=1`
//                               adds the resolved history (newest first,
//                               `limit`, default 500)
// The routes only render what alert::AlertEngine holds.
#pragma once

#include "alert/engine.h"
#include "net/http_server.h"

namespace vigil::api {

void AddAlertRoutes(net::Router* router, const alert::AlertEngine* engine);

}  // namespace vigil::api

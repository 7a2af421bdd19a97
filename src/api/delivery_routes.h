// The delivery log's API (docs/http-api.md "Notifications"):
//   GET /api/v1/notifications   the newest delivery-log entries (state,
//                               attempts, the receiver's last answer),
//                               `state` and `receiver` filter, `limit`
//                               (default 100, at most 1000); with the counts
//                               per state and per channel, and which
//                               channels are failing (their newest attempt
//                               was refused and work is left undone).
// A bad parameter gets 400 with Prometheus' error JSON.
//
// Thread safety: the handler only reads through alert::AlertEngine, which
// is safe from any thread.
#pragma once

#include "alert/engine.h"
#include "net/http_server.h"

namespace vigil::api {

void AddDeliveryRoutes(net::Router* router, const alert::AlertEngine* engine);

}  // namespace vigil::api

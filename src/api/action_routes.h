// The optional actions' API (docs/http-api.md "Actions"; alert/actions.h):
//   GET  /api/v1/actions                 the entries, newest first (`limit`,
//                                        default 100, at most 1000; `id`: that
//                                        one only), the configured actions and
//                                        the server's time (for countdowns)
//   POST /api/v1/actions/{id}/cancel     {"by": "alice"}: cancels a scheduled
//                                        entry; 404 for an unknown id, 409 once
//                                        it ran, runs, was cancelled or missed
// The POST is refused to pages of other origins like every change
// (api/params.h RefuseCrossSite).
//
// Thread safety: the handlers go through alert::ActionRunner, safe from any
// thread.
#pragma once

#include "alert/engine.h"
#include "net/http_server.h"

namespace vigil::api {

void AddActionRoutes(net::Router* router, alert::AlertEngine* engine);

}  // namespace vigil::api

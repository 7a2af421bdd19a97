// The in-app inbox's API (docs/http-api.md "Inbox"; alert/inbox.h):
//   GET  /api/v1/inbox       the items of a recipient's view, newest first:
//                            `recipient` ("" or absent: every item),
//                            `severity`, `unread=1`, `before` (an item id,
//                            for older pages), `limit` (default 100, at most
//                            500); with the view's counts (total, unread,
//                            unread by severity) and the configured
//                            recipients (for the UI's "whose inbox")
//   POST /api/v1/inbox/read  {"recipient": "alice", "ids": [3, 4], "read":
//                            true}: marks items read (or unread with
//                            "read": false) for that recipient; without
//                            "ids", every item of their view
// A bad parameter gets 400 with Prometheus' error JSON; the POST is refused
// to pages of other origins like every change (api/params.h RefuseCrossSite).
//
// Thread safety: the handlers go through alert::AlertEngine, safe from any
// thread.
#pragma once

#include "alert/engine.h"
#include "net/http_server.h"

namespace vigil::api {

void AddInboxRoutes(net::Router* router, alert::AlertEngine* engine);

}  // namespace vigil::api

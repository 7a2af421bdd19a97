// The log API over the log store (docs/log-api.md):
//   GET|POST /api/v1/logs/query       query (LogQL subset), start, end, limit, direction
//   GET      /api/v1/logs/context     stream, line, before, after
//   GET      /api/v1/logs/tail        query; cursor in `after` or Last-Event-ID (server-sent
//   events) GET      /api/v1/logs/histogram   query, start, end, step GET      /api/v1/logs/labels
//   start, end GET      /api/v1/logs/label/<name>/values   start, end GET      /api/v1/logs/sources
//   per-source line, byte, sampled, filtered, truncated totals
// Errors have the Prometheus API's shape ({"status":"error","errorType":...}).
// Log text is returned verbatim inside JSON strings; rendering it safely is the
// client's job (the web UI renders it as text, never as HTML).
#pragma once

#include "core/env.h"
#include "net/http_server.h"
#include "store/logs/log_store.h"

namespace vigil::api {

struct LogRouteOptions {
  Env* env = Env::Default();
  size_t default_limit = 100;
  size_t max_limit = 5000;
  size_t max_context = 1000;
  // Server-sent events: how long a browser waits before asking for what is
  // new (EventSource's `retry`). Each response carries what is new and ends.
  int64_t tail_retry_ms = 500;
};

void AddLogRoutes(net::Router* router, logstore::LogStore* store, LogRouteOptions options = {});

}  // namespace vigil::api
